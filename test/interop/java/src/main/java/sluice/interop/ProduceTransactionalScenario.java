package sluice.interop;

import java.time.Duration;
import java.time.Instant;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A producer with a transactional.id against a broker that does not serve transactions:
 * initTransactions() must fail fast (well inside max.block.ms, 60 s by default) with an
 * error whose message contains the expected text, instead of hanging or succeeding.
 */
final class ProduceTransactionalScenario implements Scenario {
    @Override
    public String usage() {
        return "EXPECTED_MESSAGE_SUBSTRING";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 1, this);
        String expected = args[0];
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "interop-txn");
        Instant start = Instant.now();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            throw new ScenarioFailed("initTransactions() succeeded against a broker without transactions");
        } catch (KafkaException e) {
            Duration took = Duration.between(start, Instant.now());
            String text = String.valueOf(e.getMessage()) + " / " + e.getCause();
            System.out.println("initTransactions failed after " + took.toMillis() + " ms: " + text);
            if (!text.contains(expected)) {
                throw new ScenarioFailed("error does not say why: " + text);
            }
            if (took.compareTo(Duration.ofSeconds(20)) > 0) {
                throw new ScenarioFailed("took " + took.toMillis() + " ms: not a fast failure");
            }
        }
    }
}
