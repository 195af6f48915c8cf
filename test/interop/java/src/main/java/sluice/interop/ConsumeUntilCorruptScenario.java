package sluice.interop;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Reads a partition whose segment holds a damaged batch at offset GOOD: assigns PARTITION (no
 * group), seeks to the beginning and requires the GOOD records before the damage, offsets
 * 0..GOOD-1 with values starting "record-i;", then poll() to throw the consumer's error for
 * the CORRUPT_MESSAGE answer ("Encountered corrupt message when fetching offset GOOD"), as it
 * does against Kafka.
 */
final class ConsumeUntilCorruptScenario implements Scenario {
    static final Duration DEADLINE = Duration.ofSeconds(60);

    @Override
    public String usage() {
        return "TOPIC PARTITION GOOD";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 3, this);
        TopicPartition tp = new TopicPartition(args[0], Args.parseInt(args[1], "PARTITION"));
        long good = Args.parseLong(args[2], "GOOD");
        Properties p = Clients.base(bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        long got = 0;
        String expected = "Encountered corrupt message when fetching offset " + good;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                        if (r.offset() != got || !r.value().startsWith("record-" + got + ";")) {
                            throw new ScenarioFailed("record " + got + ": offset " + r.offset() + " value '"
                                    + r.value().substring(0, Math.min(20, r.value().length())) + "'");
                        }
                        got++;
                    }
                } catch (KafkaException e) {
                    if (e.getMessage() == null || !e.getMessage().contains(expected)) {
                        throw new ScenarioFailed("poll threw " + e + ", want \"" + expected + "\"");
                    }
                    if (got != good) {
                        throw new ScenarioFailed("consumed " + got + " records before the error, want " + good);
                    }
                    System.out.println("consumed " + got + " intact records, then: " + e.getMessage());
                    return;
                }
            }
        }
        throw new ScenarioFailed("consumed " + got + " of " + good + " and no corrupt-message error within " + DEADLINE);
    }
}
