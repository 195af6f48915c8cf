package sluice.interop;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.TopicPartition;

/**
 * A KafkaConsumer with group.protocol=consumer polling in its own thread. After every poll
 * that returned records it commits them synchronously (commitSync of the offsets after the
 * records it read) and notes the commit in the ledger; a commit that throws is printed and
 * not noted. Revoked and lost partitions are noted as losses in the rebalance listener,
 * which the client runs inside poll, so the order of a member's history is its own.
 */
final class Kip848ThreadMember implements Kip848Member {
    private final String name;
    private final Properties props;
    private final BiConsumer<KafkaConsumer<String, String>, ConsumerRebalanceListener> subscribe;
    private final Kip848History ledger;
    private final AtomicReference<Set<TopicPartition>> assigned = new AtomicReference<>(Set.of());
    private final AtomicInteger changes = new AtomicInteger();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile boolean stopping;
    private Thread thread;

    /**
     * SUBSCRIBE subscribes the consumer with this member's rebalance listener (see
     * {@link #byTopics} and {@link #byPattern}); EXTRA holds the settings the scenario
     * changes (assignor, group.instance.id).
     */
    Kip848ThreadMember(String name, String bootstrap, String group, Map<String, String> extra,
        BiConsumer<KafkaConsumer<String, String>, ConsumerRebalanceListener> subscribe, Kip848History ledger) {
        this.name = name;
        this.subscribe = subscribe;
        this.ledger = ledger;
        props = Kip848Group.consumerProps(bootstrap, group, name);
        props.putAll(extra);
    }

    static BiConsumer<KafkaConsumer<String, String>, ConsumerRebalanceListener> byTopics(List<String> topics) {
        return (c, l) -> c.subscribe(topics, l);
    }

    /**
     * A client-side regular expression (java.util.regex): the client matches it against
     * the topics its metadata lists and heartbeats the matching names.
     */
    static BiConsumer<KafkaConsumer<String, String>, ConsumerRebalanceListener> byClientPattern(String regex) {
        return (c, l) -> c.subscribe(java.util.regex.Pattern.compile(regex), l);
    }

    /** A broker-side regular expression (SubscribedTopicRegex, RE2J syntax). */
    static BiConsumer<KafkaConsumer<String, String>, ConsumerRebalanceListener> byPattern(String regex) {
        return (c, l) -> c.subscribe(new SubscriptionPattern(regex), l);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Set<TopicPartition> assigned() {
        return assigned.get();
    }

    @Override
    public int assignmentChanges() {
        return changes.get();
    }

    private ConsumerRebalanceListener listener() {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                partitions.forEach(tp -> ledger.lost(name, tp));
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                partitions.forEach(tp -> ledger.lost(name, tp));
            }
        };
    }

    @Override
    public void start() {
        thread = new Thread(this::loop, "member-" + name);
        thread.start();
    }

    private void loop() {
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            subscribe.accept(consumer, listener());
            while (!stopping) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                for (ConsumerRecord<String, String> r : records) {
                    TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                    ledger.read(name, tp, r.offset(), r.value());
                    next.put(tp, new OffsetAndMetadata(r.offset() + 1));
                }
                if (!next.isEmpty()) {
                    commit(consumer, next);
                }
                Set<TopicPartition> now = Set.copyOf(consumer.assignment());
                if (!now.equals(assigned.getAndSet(now))) {
                    changes.incrementAndGet();
                    ledger.assigned(name, now);
                }
            }
        } catch (Throwable t) {
            failure.compareAndSet(null, t);
        }
        // Closing gave up whatever was still owned (the client revokes in close as well).
        assigned.getAndSet(Set.of()).forEach(tp -> ledger.lost(name, tp));
        ledger.assigned(name, Set.of());
    }

    private void commit(KafkaConsumer<String, String> consumer, Map<TopicPartition, OffsetAndMetadata> next) {
        try {
            consumer.commitSync(next);
            next.forEach((tp, o) -> ledger.committed(name, tp, o.offset()));
        } catch (RuntimeException e) {
            System.out.println(name + ": commit of " + next + " failed: " + e);
        }
    }

    @Override
    public void stop() throws InterruptedException {
        stopping = true;
        if (thread != null) {
            thread.join(Kip848Group.STEP_DEADLINE.toMillis());
            if (thread.isAlive()) {
                failure.compareAndSet(null, new IllegalStateException("did not close within " + Kip848Group.STEP_DEADLINE));
            }
        }
    }

    @Override
    public void rethrow() throws ScenarioFailed {
        Throwable t = failure.get();
        if (t != null) {
            throw new ScenarioFailed("member " + name + ": " + t);
        }
    }
}
