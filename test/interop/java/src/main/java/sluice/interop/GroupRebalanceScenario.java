package sluice.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Two KafkaConsumers (classic protocol, the client's default assignors) in GROUP on TOPIC
 * with PARTITIONS partitions, each in its own thread, committing after every poll:
 * member a alone owns every partition and reads a first wave of records; member b joins
 * and the group must rebalance to two non-empty, disjoint assignments covering the topic,
 * and a second wave must be read, each record by the member owning its partition; b
 * closes (LeaveGroup) and a must own every partition again and read a third wave. The
 * only setting changed is auto.offset.reset=earliest, so no wave can slip past a member
 * whose position is resolved after the wave was written.
 */
final class GroupRebalanceScenario implements Scenario {
    static final Duration STEP_DEADLINE = Duration.ofSeconds(60);
    static final int WAVE = 200;

    @Override
    public String usage() {
        return "TOPIC GROUP PARTITIONS";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 3, this);
        String topic = args[0];
        String group = args[1];
        int partitions = Args.parseInt(args[2], "PARTITIONS");
        Set<TopicPartition> all = new HashSet<>();
        for (int p = 0; p < partitions; p++) {
            all.add(new TopicPartition(topic, p));
        }
        Map<String, String> seenBy = new ConcurrentHashMap<>(); // record value -> member
        Member a = new Member("a", bootstrap, topic, group, seenBy);
        Member b = new Member("b", bootstrap, topic, group, seenBy);
        try (KafkaProducer<String, String> producer = producer(bootstrap)) {
            a.start();
            await("member a owns all " + partitions + " partitions", () -> a.assigned().equals(all), a, b);
            Map<String, Integer> wave1 = produce(producer, topic, group + "-wave1");
            await("member a read wave 1", () -> seenBy.keySet().containsAll(wave1.keySet()), a, b);

            b.start();
            await("a and b own disjoint, non-empty sets covering the topic", () -> {
                Set<TopicPartition> sa = a.assigned();
                Set<TopicPartition> sb = b.assigned();
                Set<TopicPartition> union = new HashSet<>(sa);
                union.addAll(sb);
                return !sa.isEmpty() && !sb.isEmpty() && union.equals(all) && union.size() == sa.size() + sb.size();
            }, a, b);
            Set<TopicPartition> ownedByA = a.assigned();
            System.out.println("after b joined: a owns " + ownedByA + ", b owns " + b.assigned());
            Map<String, Integer> wave2 = produce(producer, topic, group + "-wave2");
            await("a and b read wave 2", () -> seenBy.keySet().containsAll(wave2.keySet()), a, b);
            for (Map.Entry<String, Integer> e : wave2.entrySet()) {
                String owner = ownedByA.contains(new TopicPartition(topic, e.getValue())) ? "a" : "b";
                if (!owner.equals(seenBy.get(e.getKey()))) {
                    throw new ScenarioFailed(e.getKey() + " in partition " + e.getValue() + " was read by "
                        + seenBy.get(e.getKey()) + ", but " + owner + " owns that partition");
                }
            }

            b.stop();
            await("member a owns all partitions again after b left", () -> a.assigned().equals(all), a, b);
            Map<String, Integer> wave3 = produce(producer, topic, group + "-wave3");
            await("member a read wave 3", () -> seenBy.keySet().containsAll(wave3.keySet()), a, b);
            for (String v : wave3.keySet()) {
                if (!"a".equals(seenBy.get(v))) {
                    throw new ScenarioFailed(v + " was read by " + seenBy.get(v) + ", want a");
                }
            }
        } finally {
            b.stop();
            a.stop();
        }
        a.rethrow();
        b.rethrow();
        System.out.println("3 waves of " + WAVE + " records read across the rebalances in group " + group);
    }

    private static KafkaProducer<String, String> producer(String bootstrap) {
        Properties p = Clients.base(bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    /**
     * Sends one wave of keyed records, values unique to this run (the group name is in
     * them); returns each value with the partition it went to.
     */
    private static Map<String, Integer> produce(KafkaProducer<String, String> producer, String topic, String wave)
        throws Exception {
        List<Future<RecordMetadata>> pending = new ArrayList<>();
        List<String> values = new ArrayList<>();
        for (int i = 0; i < WAVE; i++) {
            values.add(wave + "-" + i);
            pending.add(producer.send(new ProducerRecord<>(topic, "key-" + i, wave + "-" + i)));
        }
        producer.flush();
        Map<String, Integer> partitionOf = new ConcurrentHashMap<>();
        for (int i = 0; i < WAVE; i++) {
            partitionOf.put(values.get(i), pending.get(i).get().partition());
        }
        return partitionOf;
    }

    private static void await(String what, BooleanSupplier done, Member a, Member b) throws Exception {
        long started = System.nanoTime();
        long deadline = started + STEP_DEADLINE.toNanos();
        while (!done.getAsBoolean()) {
            a.rethrow();
            b.rethrow();
            if (System.nanoTime() > deadline) {
                throw new ScenarioFailed("not within " + STEP_DEADLINE + ": " + what + " (a owns " + a.assigned()
                    + ", b owns " + b.assigned() + ")");
            }
            Thread.sleep(100);
        }
        System.out.println("ok: " + what + " (" + (System.nanoTime() - started) / 1_000_000 + " ms)");
    }

    /** One group member polling in its own thread until stopped. */
    private static final class Member {
        private final String name;
        private final Properties props;
        private final String topic;
        private final Map<String, String> seenBy;
        private final AtomicReference<Set<TopicPartition>> assigned = new AtomicReference<>(Set.of());
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private volatile boolean stopping;
        private Thread thread;

        Member(String name, String bootstrap, String topic, String group, Map<String, String> seenBy) {
            this.name = name;
            this.topic = topic;
            this.seenBy = seenBy;
            props = Clients.base(bootstrap);
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            props.put(ConsumerConfig.CLIENT_ID_CONFIG, "sluice-interop-" + name);
            props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
            props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        }

        Set<TopicPartition> assigned() {
            return assigned.get();
        }

        void start() {
            thread = new Thread(this::loop, "member-" + name);
            thread.start();
        }

        private void loop() {
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                while (!stopping) {
                    var records = consumer.poll(Duration.ofMillis(200));
                    for (ConsumerRecord<String, String> r : records) {
                        seenBy.putIfAbsent(r.value(), name);
                    }
                    if (!records.isEmpty()) {
                        consumer.commitSync();
                    }
                    assigned.set(Set.copyOf(consumer.assignment()));
                }
            } catch (Throwable t) {
                failure.compareAndSet(null, t);
            }
            assigned.set(Set.of());
        }

        /** Closes the consumer (LeaveGroup) and waits for the thread. */
        void stop() throws InterruptedException {
            stopping = true;
            if (thread != null) {
                thread.join(STEP_DEADLINE.toMillis());
            }
        }

        void rethrow() throws ScenarioFailed {
            Throwable t = failure.get();
            if (t != null) {
                throw new ScenarioFailed("member " + name + ": " + t);
            }
        }
    }
}
