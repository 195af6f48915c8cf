package sluice.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Produces N records with the producer's default settings (acks=all, idempotent, the
 * 4.x linger) and requires every one to be acknowledged. Values are "value-i".
 */
final class ProduceScenario implements Scenario {
    @Override
    public String usage() {
        return "TOPIC N";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 2, this);
        String topic = args[0];
        long n = Args.parseLong(args[1], "N");
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        long acked = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> pending = new ArrayList<>();
            for (long i = 0; i < n; i++) {
                pending.add(producer.send(new ProducerRecord<>(topic, "key-" + i, "value-" + i)));
            }
            producer.flush();
            for (Future<RecordMetadata> f : pending) {
                try {
                    f.get();
                    acked++;
                } catch (ExecutionException e) {
                    throw new ScenarioFailed("record " + acked + " not acknowledged: " + e.getCause());
                }
            }
        }
        System.out.println("acked " + acked);
        if (acked != n) {
            throw new ScenarioFailed("acked " + acked + " of " + n);
        }
    }
}
