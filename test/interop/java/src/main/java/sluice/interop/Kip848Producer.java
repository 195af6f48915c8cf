package sluice.interop;

import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A producer writing keyed records, values unique to the run (PREFIX-N), to TOPIC in its
 * own thread, about one every PACE_MS, until stopped; each acknowledged record goes into
 * the ledger with its partition and offset. A send that fails fails the scenario.
 *
 * The first record to each partition is written alone, synchronously: a new partition's
 * first write can meet a leader that is not ready yet (NOT_LEADER_OR_FOLLOWER), and an
 * idempotent producer with later batches in flight then may never get its retried first
 * batch in (OUT_OF_ORDER_SEQUENCE_NUMBER for ever; seen with Kafka 4.4 on a topic created
 * just before).
 */
final class Kip848Producer {
    private static final long PACE_MS = 5;

    private final KafkaProducer<String, String> producer;
    private final Kip848Ledger ledger;
    private final String prefix;
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final AtomicInteger sent = new AtomicInteger();
    private final Set<TopicPartition> warmed = ConcurrentHashMap.newKeySet();
    private final String topic;
    private volatile boolean stopping;
    private Thread thread;

    Kip848Producer(String bootstrap, String topic, String prefix, Kip848Ledger ledger) {
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        producer = new KafkaProducer<>(p);
        this.topic = topic;
        this.prefix = prefix;
        this.ledger = ledger;
    }

    void start() throws Exception {
        warmUp(topic, null);
        thread = new Thread(this::loop, "producer-" + prefix);
        thread.start();
    }

    /** Sends N records to TOPIC at once, waiting for their acknowledgements (no thread). */
    void burst(String toTopic, int n) throws Exception {
        burst(toTopic, null, n);
    }

    /** The same to PARTITION of TOPIC (null: by key). */
    void burst(String toTopic, Integer partition, int n) throws Exception {
        warmUp(toTopic, partition);
        for (int i = 0; i < n; i++) {
            send(toTopic, partition);
        }
        producer.flush();
        rethrow();
    }

    private void loop() {
        try {
            while (!stopping) {
                send(topic, null);
                Thread.sleep(PACE_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** One record, synchronously, to PARTITION (null: each partition) of TOPIC not written to yet. */
    private void warmUp(String toTopic, Integer partition) throws Exception {
        if (partition != null) {
            if (warmed.add(new TopicPartition(toTopic, partition))) {
                send(toTopic, partition).get();
            }
            return;
        }
        for (PartitionInfo p : producer.partitionsFor(toTopic)) {
            warmUp(toTopic, p.partition());
        }
    }

    private Future<RecordMetadata> send(String toTopic, Integer partition) {
        int n = sent.getAndIncrement();
        String value = prefix + "-" + n;
        return producer.send(new ProducerRecord<>(toTopic, partition, "key-" + n, value), (md, e) -> {
            if (e != null) {
                failure.compareAndSet(null, e);
            } else {
                ledger.produced(value, new TopicPartition(md.topic(), md.partition()), md.offset());
            }
        });
    }

    /** Stops the thread, waits for every acknowledgement, and closes the producer. */
    void stop() throws Exception {
        stopping = true;
        if (thread != null) {
            thread.join();
        }
        producer.flush();
        producer.close();
        rethrow();
        System.out.println("producer " + prefix + ": " + sent.get() + " records sent and acknowledged");
    }

    void rethrow() throws ScenarioFailed {
        if (failure.get() != null) {
            throw new ScenarioFailed("producer " + prefix + ": " + failure.get());
        }
    }
}
