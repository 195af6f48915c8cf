package sluice.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The transactional producer and a read_committed consumer, every other setting at its
 * default: one producer (transactional.id set) runs COMMITS + ABORTS transactions of
 * PER_TXN keyed records each into TOPIC (every third transaction aborted while aborts are
 * left, so committed and aborted data interleave in each partition). Before an abort the
 * records are flushed and acknowledged, so aborted data really is in the log. Then:
 * <ul>
 * <li>a read_committed consumer (assign every partition, from the beginning) reads exactly
 * the committed records, each once, none of an aborted transaction, and its position
 * reaches the read_committed end offsets (the last stable offset is not stuck);</li>
 * <li>a read_uncommitted consumer reads every record sent, committed and aborted, which
 * shows the aborted ones were written and filtered, not lost.</li>
 * </ul>
 * Prints "committed C aborted A read_committed C read_uncommitted C+A".
 */
final class TransactionalProduceConsumeScenario implements Scenario {
    static final Duration DEADLINE = Duration.ofSeconds(60);
    /** How long to keep polling at the end offsets to catch anything extra. */
    static final Duration QUIET = Duration.ofSeconds(2);

    @Override
    public String usage() {
        return "TOPIC COMMITS ABORTS PER_TXN";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 4, this);
        String topic = args[0];
        int commits = Args.parseInt(args[1], "COMMITS");
        int aborts = Args.parseInt(args[2], "ABORTS");
        int perTxn = Args.parseInt(args[3], "PER_TXN");
        Set<String> committed = new HashSet<>();
        Set<String> aborted = new HashSet<>();
        produce(bootstrap, topic, commits, aborts, perTxn, committed, aborted);

        List<String> readCommitted = consumeAll(bootstrap, topic, "read_committed", committed.size());
        checkExactly("read_committed", readCommitted, committed, aborted);
        Set<String> all = new HashSet<>(committed);
        all.addAll(aborted);
        List<String> readUncommitted = consumeAll(bootstrap, topic, "read_uncommitted", all.size());
        checkExactly("read_uncommitted", readUncommitted, all, Set.of());
        System.out.println("committed " + committed.size() + " aborted " + aborted.size() + " read_committed "
                + readCommitted.size() + " read_uncommitted " + readUncommitted.size());
    }

    private static void produce(String bootstrap, String topic, int commits, int aborts, int perTxn,
            Set<String> committed, Set<String> aborted) throws Exception {
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "interop-java-txn-" + topic);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            int abortsLeft = aborts;
            int commitsLeft = commits;
            for (int t = 0; commitsLeft + abortsLeft > 0; t++) {
                boolean abort = abortsLeft > 0 && (t % 3 == 1 || commitsLeft == 0);
                String kind = abort ? "aborted" : "committed";
                producer.beginTransaction();
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                List<String> values = new ArrayList<>();
                for (int i = 0; i < perTxn; i++) {
                    String value = kind + "-t" + t + "-r" + i;
                    values.add(value);
                    sent.add(producer.send(new ProducerRecord<>(topic, "t" + t + "-r" + i, value)));
                }
                if (abort) {
                    producer.flush();
                    awaitAcks(sent, t);
                    producer.abortTransaction();
                    aborted.addAll(values);
                    abortsLeft--;
                } else {
                    producer.commitTransaction();
                    awaitAcks(sent, t);
                    committed.addAll(values);
                    commitsLeft--;
                }
            }
        }
        System.out.println("produced " + commits + " committed and " + aborts + " aborted transactions of " + perTxn
                + " records");
    }

    private static void awaitAcks(List<Future<RecordMetadata>> sent, int txn) throws Exception {
        for (Future<RecordMetadata> f : sent) {
            if (f.get().offset() < 0) {
                throw new ScenarioFailed("transaction " + txn + ": a record acknowledged without an offset");
            }
        }
    }

    /**
     * Reads every partition of TOPIC from the beginning at the isolation level until the
     * position reaches that level's end offsets (and at least WANT values are read), then
     * polls a quiet period more.
     */
    static List<String> consumeAll(String bootstrap, String topic, String isolation, int want)
            throws Exception {
        Properties p = Clients.base(bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        List<String> got = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic)) {
                tps.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(tps);
            consumer.seekToBeginning(tps);
            Map<TopicPartition, Long> end = consumer.endOffsets(tps);
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while ((got.size() < want || !reached(consumer, end)) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    got.add(r.value());
                }
            }
            if (!reached(consumer, end)) {
                throw new ScenarioFailed(isolation + ": positions " + positions(consumer, tps) + " short of the end "
                        + end + " after " + DEADLINE + " (" + got.size() + " records read)");
            }
            for (ConsumerRecord<String, String> r : consumer.poll(QUIET)) {
                got.add(r.value());
            }
            System.out.println(isolation + ": " + got.size() + " records, end offsets " + end);
        }
        return got;
    }

    private static boolean reached(KafkaConsumer<String, String> consumer, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    private static Map<TopicPartition, Long> positions(KafkaConsumer<String, String> consumer,
            List<TopicPartition> tps) {
        Map<TopicPartition, Long> out = new HashMap<>();
        for (TopicPartition tp : tps) {
            out.put(tp, consumer.position(tp));
        }
        return out;
    }

    /** WANT each exactly once, nothing else; a value of FORBIDDEN is named as such. */
    static void checkExactly(String what, List<String> got, Set<String> want, Set<String> forbidden)
            throws ScenarioFailed {
        Set<String> seen = new HashSet<>();
        for (String v : got) {
            if (forbidden.contains(v)) {
                throw new ScenarioFailed(what + ": read a record of an aborted transaction: " + v);
            }
            if (!want.contains(v)) {
                throw new ScenarioFailed(what + ": read a record never sent: " + v);
            }
            if (!seen.add(v)) {
                throw new ScenarioFailed(what + ": read " + v + " twice");
            }
        }
        if (seen.size() != want.size()) {
            Set<String> missing = new HashSet<>(want);
            missing.removeAll(seen);
            throw new ScenarioFailed(what + ": " + missing.size() + " of " + want.size() + " records missing, e.g. "
                    + missing.iterator().next());
        }
    }
}
