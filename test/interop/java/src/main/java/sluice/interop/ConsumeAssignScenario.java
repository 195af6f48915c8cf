package sluice.interop;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Assigns one partition (no group), seeks to OFFSET and requires N records whose offsets
 * run OFFSET, OFFSET+1, ... with no gap or repeat (true for a topic without transactions
 * or compaction, which is what the suite uses).
 */
final class ConsumeAssignScenario implements Scenario {
    static final Duration DEADLINE = Duration.ofSeconds(60);

    @Override
    public String usage() {
        return "TOPIC PARTITION OFFSET N";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 4, this);
        TopicPartition tp = new TopicPartition(args[0], Args.parseInt(args[1], "PARTITION"));
        long offset = Args.parseLong(args[2], "OFFSET");
        long n = Args.parseLong(args[3], "N");
        Properties p = Clients.base(bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        long next = offset;
        long got = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seek(tp, offset);
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (got < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    if (got == n) {
                        break;
                    }
                    if (r.offset() != next) {
                        throw new ScenarioFailed("record " + got + " has offset " + r.offset() + ", want " + next);
                    }
                    next++;
                    got++;
                }
            }
        }
        System.out.println("consumed " + got + " records, offsets " + offset + ".." + (next - 1));
        if (got != n) {
            throw new ScenarioFailed("consumed " + got + " of " + n + " within " + DEADLINE);
        }
    }
}
