package sluice.interop;

import java.time.Duration;
import java.time.Instant;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A producer with a transactional.id against a broker that serves transactions:
 * initTransactions() must succeed well inside max.block.ms (60 s by default), and one
 * transaction of one record into TOPIC must commit with the record acknowledged. (Before
 * Sluice served transactions this scenario checked that initTransactions() failed fast;
 * {@link TransactionalProduceConsumeScenario} checks what a consumer then reads.)
 */
final class ProduceTransactionalScenario implements Scenario {
    static final Duration FAST = Duration.ofSeconds(20);

    @Override
    public String usage() {
        return "TOPIC";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 1, this);
        String topic = args[0];
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "interop-txn");
        Instant start = Instant.now();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            Duration took = Duration.between(start, Instant.now());
            System.out.println("initTransactions succeeded after " + took.toMillis() + " ms");
            if (took.compareTo(FAST) > 0) {
                throw new ScenarioFailed("initTransactions took " + took.toMillis() + " ms, more than " + FAST);
            }
            producer.beginTransaction();
            var sent = producer.send(new ProducerRecord<>(topic, "key", "value"));
            producer.commitTransaction();
            RecordMetadata md = sent.get();
            System.out.println("committed one record at " + md.topic() + "-" + md.partition() + "@" + md.offset());
        }
    }
}
