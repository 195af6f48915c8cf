package sluice.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Zombie fencing: producer A (transactional.id X) opens a transaction and writes a record
 * to partition 0 of TOPIC (acknowledged); producer B with the same transactional.id calls
 * initTransactions(), which fences A and aborts A's open transaction. A's commit must then
 * fail with ProducerFencedException (Kafka's answer for a fenced epoch), B commits one
 * record, and a read_committed consumer of partition 0 reads B's record and none of A's.
 */
final class TransactionalFencingScenario implements Scenario {
    static final Duration DEADLINE = Duration.ofSeconds(60);

    @Override
    public String usage() {
        return "TOPIC";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 1, this);
        String topic = args[0];
        String txnID = "interop-java-fence-" + topic;
        try (KafkaProducer<String, String> zombie = producer(bootstrap, txnID)) {
            zombie.initTransactions();
            zombie.beginTransaction();
            zombie.send(new ProducerRecord<>(topic, 0, "k", "zombie")).get();
            try (KafkaProducer<String, String> fresh = producer(bootstrap, txnID)) {
                fresh.initTransactions();
                commitFenced(zombie);
                fresh.beginTransaction();
                fresh.send(new ProducerRecord<>(topic, 0, "k", "fresh"));
                fresh.commitTransaction();
            }
        }
        List<String> got = readCommitted(bootstrap, new TopicPartition(topic, 0));
        if (!got.equals(List.of("fresh"))) {
            throw new ScenarioFailed("read_committed partition 0: " + got + ", want [fresh]");
        }
        System.out.println("zombie fenced; read_committed reads only the new producer's record");
    }

    private static void commitFenced(KafkaProducer<String, String> zombie) throws ScenarioFailed {
        try {
            zombie.commitTransaction();
        } catch (ProducerFencedException e) {
            System.out.println("zombie's commit: " + e.getClass().getSimpleName() + ": " + e.getMessage());
            return;
        } catch (KafkaException e) {
            throw new ScenarioFailed("zombie's commit failed with " + e + ", want ProducerFencedException");
        }
        throw new ScenarioFailed("the zombie producer committed after a new producer took its transactional.id");
    }

    private static KafkaProducer<String, String> producer(String bootstrap, String txnID) {
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, txnID);
        return new KafkaProducer<>(p);
    }

    private static List<String> readCommitted(String bootstrap, TopicPartition tp) throws Exception {
        Properties p = Clients.base(bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (consumer.position(tp) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    got.add(r.value());
                }
            }
            if (consumer.position(tp) < end) {
                throw new ScenarioFailed("read_committed position " + consumer.position(tp) + " short of " + end);
            }
        }
        return got;
    }
}
