package sluice.interop;

import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A producer and a consumer on partition 0 of TOPIC at once, long enough for the test
 * script to kill the partition's leader under them. The producer keeps its defaults
 * (acks=all, idempotent) and sends N records "value-i", one every INTERVAL_MS; the consumer
 * (no group, from the beginning, auto.offset.reset=none so a wrong fetch position fails
 * instead of silently resetting) reads until it has seen every acknowledged record.
 *
 * Passes when every record was acknowledged and read back exactly once, in the order sent.
 * Prints "progress acked K" lines as it goes (the script waits for one before the kill).
 */
final class FailoverProduceConsumeScenario implements Scenario {
    static final Duration READ_DEADLINE = Duration.ofSeconds(90);
    /** How long to keep polling after the last record, to catch duplicates. */
    static final Duration QUIET = Duration.ofSeconds(2);
    static final long PROGRESS_EVERY = 250;

    @Override
    public String usage() {
        return "TOPIC N INTERVAL_MS";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 3, this);
        TopicPartition tp = new TopicPartition(args[0], 0);
        int n = Args.parseInt(args[1], "N");
        long interval = Args.parseLong(args[2], "INTERVAL_MS");

        AtomicReferenceArray<String> seenAt = new AtomicReferenceArray<>(n);
        ConsumerLoop consumer = new ConsumerLoop(bootstrap, tp, n, seenAt);
        Thread reader = new Thread(consumer, "failover-consumer");
        reader.start();
        long acked;
        try {
            acked = produce(bootstrap, tp, n, interval);
            consumer.waitForAcked(acked);
        } finally {
            consumer.stop.set(true);
            reader.join();
        }
        if (consumer.failure.get() != null) {
            throw new ScenarioFailed("consumer: " + consumer.failure.get());
        }
        if (!consumer.problems.isEmpty()) {
            throw new ScenarioFailed("consumer read wrong records: " + String.join("; ", consumer.problems));
        }
        if (acked != n) {
            throw new ScenarioFailed("acked " + acked + " of " + n);
        }
        for (int i = 0; i < n; i++) {
            if (seenAt.get(i) == null) {
                throw new ScenarioFailed("acknowledged record value-" + i + " was never read back (read "
                        + consumer.read.get() + " records)");
            }
        }
        System.out.println("acked " + acked + ", read back " + consumer.read.get()
                + " records: each exactly once, in order");
    }

    /** Sends the records and returns how many were acknowledged; fails on the first error. */
    private static long produce(String bootstrap, TopicPartition tp, int n, long interval) throws Exception {
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        AtomicLong acked = new AtomicLong();
        AtomicReference<Exception> failed = new AtomicReference<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < n && failed.get() == null; i++) {
                producer.send(new ProducerRecord<>(tp.topic(), tp.partition(), "key-" + i, "value-" + i), (md, e) -> {
                    if (e != null) {
                        failed.compareAndSet(null, e);
                        return;
                    }
                    long k = acked.incrementAndGet();
                    if (k % PROGRESS_EVERY == 0) {
                        System.out.println("progress acked " + k);
                        System.out.flush();
                    }
                });
                if (interval > 0) {
                    Thread.sleep(interval);
                }
            }
            producer.flush();
        }
        if (failed.get() != null) {
            throw new ScenarioFailed("a record was not acknowledged after " + acked.get() + " were: " + failed.get());
        }
        return acked.get();
    }

    /** Reads partition 0 from the beginning and records where each value was seen. */
    private static final class ConsumerLoop implements Runnable {
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong read = new AtomicLong();
        final AtomicReference<Exception> failure = new AtomicReference<>();
        final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        private final String bootstrap;
        private final TopicPartition tp;
        private final int n;
        private final AtomicReferenceArray<String> seenAt;
        private final AtomicLong distinct = new AtomicLong();
        private long lastIndex = -1;

        ConsumerLoop(String bootstrap, TopicPartition tp, int n, AtomicReferenceArray<String> seenAt) {
            this.bootstrap = bootstrap;
            this.tp = tp;
            this.n = n;
            this.seenAt = seenAt;
        }

        /** Waits until every acknowledged record was read, then for a quiet period. */
        void waitForAcked(long acked) throws InterruptedException {
            long deadline = System.nanoTime() + READ_DEADLINE.toNanos();
            while (distinct.get() < acked && failure.get() == null && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            Thread.sleep(QUIET.toMillis());
        }

        @Override
        public void run() {
            Properties p = Clients.base(bootstrap);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                while (!stop.get()) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                        record(r);
                    }
                }
            } catch (Exception e) {
                failure.set(e);
            }
        }

        private void record(ConsumerRecord<String, String> r) {
            read.incrementAndGet();
            String where = "offset " + r.offset();
            int index = indexOf(r.value());
            if (index < 0 || index >= n) {
                problems.add("unexpected value '" + r.value() + "' at " + where);
                return;
            }
            if (!seenAt.compareAndSet(index, null, where)) {
                problems.add("value-" + index + " read twice, at " + seenAt.get(index) + " and " + where);
                return;
            }
            if (index <= lastIndex) {
                problems.add("value-" + index + " at " + where + " after value-" + lastIndex);
            }
            lastIndex = index;
            distinct.incrementAndGet();
        }

        private static int indexOf(String value) {
            if (value == null || !value.startsWith("value-")) {
                return -1;
            }
            try {
                return Integer.parseInt(value.substring("value-".length()));
            } catch (NumberFormatException e) {
                return -1;
            }
        }
    }
}
