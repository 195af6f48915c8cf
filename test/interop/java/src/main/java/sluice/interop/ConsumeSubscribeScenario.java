package sluice.interop;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Joins GROUP (classic protocol, the client default), subscribes to TOPIC from the earliest
 * offset, requires N records with offsets increasing per partition, then commits them
 * synchronously, so the group machinery (JoinGroup, SyncGroup, OffsetCommit) is exercised.
 */
final class ConsumeSubscribeScenario implements Scenario {
    static final Duration DEADLINE = Duration.ofSeconds(90);

    @Override
    public String usage() {
        return "TOPIC GROUP N";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 3, this);
        String topic = args[0];
        String group = args[1];
        long n = Args.parseLong(args[2], "N");
        Properties p = Clients.base(bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        Map<TopicPartition, Long> lastOffset = new HashMap<>();
        long got = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.subscribe(List.of(topic));
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (got < n && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    Long prev = lastOffset.put(tp, r.offset());
                    if (prev != null && r.offset() <= prev) {
                        throw new ScenarioFailed(tp + ": offset " + r.offset() + " after " + prev);
                    }
                    got++;
                }
            }
            if (got >= n) {
                consumer.commitSync();
            }
        }
        System.out.println("consumed " + got + " records from " + lastOffset.size() + " partition(s) in group " + group);
        if (got < n) {
            throw new ScenarioFailed("consumed " + got + " of " + n + " within " + DEADLINE);
        }
    }
}
