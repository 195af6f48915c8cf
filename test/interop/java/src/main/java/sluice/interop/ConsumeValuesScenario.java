package sluice.interop;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads back what {@link ProduceScenario} wrote to a one-partition topic: assigns PARTITION
 * (no group), seeks to the beginning and requires exactly N records, the one at offset i
 * with key "key-i" and value "value-i", and nothing after them. Checks content, where
 * consume-assign checks only offsets.
 */
final class ConsumeValuesScenario implements Scenario {
    static final Duration DEADLINE = Duration.ofSeconds(60);
    /** How long to keep polling after the N-th record to catch extra records. */
    static final Duration QUIET = Duration.ofSeconds(2);

    @Override
    public String usage() {
        return "TOPIC PARTITION N";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 3, this);
        TopicPartition tp = new TopicPartition(args[0], Args.parseInt(args[1], "PARTITION"));
        long n = Args.parseLong(args[2], "N");
        Properties p = Clients.base(bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        long got = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (got < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    check(r, got, n);
                    got++;
                }
            }
            if (got != n) {
                throw new ScenarioFailed("consumed " + got + " of " + n + " within " + DEADLINE);
            }
            ConsumerRecords<String, String> extra = consumer.poll(QUIET);
            if (!extra.isEmpty()) {
                ConsumerRecord<String, String> first = extra.iterator().next();
                throw new ScenarioFailed(extra.count() + " record(s) after the " + n + " expected, first at offset "
                        + first.offset() + " key '" + first.key() + "'");
            }
        }
        System.out.println("consumed " + got + " records, keys and values match offsets 0.." + (got - 1));
    }

    private static void check(ConsumerRecord<String, String> r, long index, long n) throws ScenarioFailed {
        if (index >= n) {
            throw new ScenarioFailed("more than " + n + " records: offset " + r.offset() + " key '" + r.key() + "'");
        }
        String wantKey = "key-" + index;
        String wantValue = "value-" + index;
        if (r.offset() != index || !wantKey.equals(r.key()) || !wantValue.equals(r.value())) {
            throw new ScenarioFailed("record " + index + ": offset " + r.offset() + " key '" + r.key() + "' value '"
                    + r.value() + "', want offset " + index + " key '" + wantKey + "' value '" + wantValue + "'");
        }
    }
}
