package sluice.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Consume-transform-produce with the Java clients' defaults (a 4.x producer uses
 * Transactions V2: its offsets go straight to the group coordinator in TxnOffsetCommit,
 * without AddOffsetsToTxn): N records into IN (idempotent producer), then a group member of
 * GROUP (read_committed) reads IN and, per poll, one transaction writes upper-cased copies
 * to OUT and sendOffsetsToTransaction(positions, groupMetadata()); the second batch is
 * aborted instead and the consumer rewinds to the group's committed offsets; a last
 * transaction holds only the offsets (as Kafka Streams commits when nothing was produced).
 * Then a
 * read_committed reader of OUT finds each input's copy exactly once, and the group's
 * committed offsets are IN's end offsets.
 */
final class TransactionalOffsetsScenario implements Scenario {
    static final Duration DEADLINE = Duration.ofSeconds(60);

    @Override
    public String usage() {
        return "IN OUT GROUP N";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 4, this);
        String in = args[0];
        String out = args[1];
        String group = args[2];
        int n = Args.parseInt(args[3], "N");
        produceInput(bootstrap, in, n);
        int transactions = transform(bootstrap, in, out, group, n);
        Set<String> want = new HashSet<>();
        for (int i = 0; i < n; i++) {
            want.add("OUT-" + i);
        }
        List<String> got = TransactionalProduceConsumeScenario.consumeAll(bootstrap, out, "read_committed", n);
        TransactionalProduceConsumeScenario.checkExactly("output read_committed", got, want, Set.of());
        checkGroupOffsets(bootstrap, in, group);
        System.out.println("transformed " + n + " records in " + transactions
                + " committed transactions; output exact, group offsets at the end");
    }

    private static void produceInput(String bootstrap, String in, int n) throws Exception {
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < n; i++) {
                producer.send(new ProducerRecord<>(in, "k" + i, "in-" + i));
            }
            producer.flush();
        }
    }

    private static int transform(String bootstrap, String in, String out, String group, int n) throws Exception {
        Properties c = Clients.base(bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        c.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "50");
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "interop-java-ctp-" + group);
        int processed = 0;
        int batches = 0;
        int committed = 0;
        int aborted = -1;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c);
                KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            consumer.subscribe(List.of(in));
            long deadline = System.nanoTime() + DEADLINE.toNanos();
            while (processed < n) {
                if (System.nanoTime() > deadline) {
                    throw new ScenarioFailed("processed " + processed + " of " + n + " within " + DEADLINE);
                }
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(500));
                if (records.isEmpty()) {
                    continue;
                }
                batches++;
                producer.beginTransaction();
                for (ConsumerRecord<String, String> r : records) {
                    producer.send(new ProducerRecord<>(out, r.key(), r.value().replace("in-", "OUT-")));
                }
                Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                for (TopicPartition tp : records.partitions()) {
                    List<ConsumerRecord<String, String>> part = records.records(tp);
                    positions.put(tp, new OffsetAndMetadata(part.get(part.size() - 1).offset() + 1));
                }
                producer.sendOffsetsToTransaction(positions, consumer.groupMetadata());
                if (batches == 2) {
                    producer.flush();
                    producer.abortTransaction();
                    aborted = records.count();
                    rewind(consumer);
                    continue;
                }
                producer.commitTransaction();
                committed++;
                processed += records.count();
            }
            // A transaction of offsets alone, as Kafka Streams commits when only input
            // positions moved: the offsets partition is its one partition.
            producer.beginTransaction();
            Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
            for (TopicPartition tp : consumer.assignment()) {
                positions.put(tp, new OffsetAndMetadata(consumer.position(tp)));
            }
            producer.sendOffsetsToTransaction(positions, consumer.groupMetadata());
            producer.commitTransaction();
            committed++;
        }
        if (aborted < 0) {
            throw new ScenarioFailed("all input read in one poll: no transaction was aborted; use a larger N");
        }
        System.out.println("aborted one transaction of " + aborted + " records, redone");
        return committed;
    }

    /** Seeks every assigned partition to the group's committed offset (or the beginning). */
    private static void rewind(KafkaConsumer<String, String> consumer) {
        Set<TopicPartition> assigned = consumer.assignment();
        Map<TopicPartition, OffsetAndMetadata> committed = consumer.committed(assigned);
        List<TopicPartition> none = new ArrayList<>();
        for (TopicPartition tp : assigned) {
            OffsetAndMetadata om = committed.get(tp);
            if (om == null) {
                none.add(tp);
            } else {
                consumer.seek(tp, om.offset());
            }
        }
        consumer.seekToBeginning(none);
    }

    private static void checkGroupOffsets(String bootstrap, String in, String group) throws Exception {
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (var info : admin.describeTopics(List.of(in)).allTopicNames().get().get(in).partitions()) {
                latest.put(new TopicPartition(in, info.partition()), OffsetSpec.latest());
            }
            for (var e : admin.listOffsets(latest).all().get().entrySet()) {
                OffsetAndMetadata om = committed.get(e.getKey());
                long end = e.getValue().offset();
                if (om == null ? end != 0 : om.offset() != end) {
                    throw new ScenarioFailed("group " + group + " committed " + om + " on " + e.getKey() + ", end "
                            + end);
                }
            }
        }
    }
}
