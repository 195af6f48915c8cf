package sluice.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupIdNotFoundException;

/**
 * The online migration of a live group between the protocols (group.consumer.migration.policy
 * bidirectional, the default), with the Java KafkaConsumer in threads, client defaults but
 * group.protocol (and, for classic members, session.timeout.ms and heartbeat.interval.ms, so
 * that a rebalance is noticed within a second). Each member commits synchronously after
 * processing every poll that returned records (auto-commit stays at its default, on; it
 * commits the same positions).
 *
 * Upgrade: under a live producer classic members c1, c2, c3 form a classic group; c1 closes
 * and k1 (group.protocol=consumer) joins, which turns the group into a consumer group; k2
 * joins before c2 closes, k3 before c3 closes (a mixed group of classic and consumer-protocol
 * members). Downgrade: the same with classic members c4, c5, c6 replacing k1, k2, k3; when
 * k3 leaves, the group is a classic group again. At every step the members' own assignments
 * are non-empty, disjoint, balanced and cover the topic, and describeConsumerGroups shows the
 * group Stable, of type CONSUMER while a consumer-protocol member is in it and CLASSIC
 * otherwise, with exactly the live members (classic ones not upgraded) and their assignments.
 * After each phase the producer stops and the members read everything and commit the end
 * offsets: every record read, duplicates only after a revocation without commit
 * ({@link Kip848Ledger}), and the committed offsets, sampled every second with
 * listConsumerGroupOffsets during the whole run, never went back on any partition.
 */
final class Kip848MigrationScenario implements Scenario {
    private static final Map<String, String> CLASSIC = Map.of(
        ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic",
        ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000",
        ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");

    private String bootstrap;
    private String topic;
    private String group;
    private Set<TopicPartition> all;
    private final Kip848Ledger ledger = new Kip848Ledger();
    private final Set<String> classicNames = new HashSet<>();
    private final List<Kip848Member> started = new ArrayList<>();
    private final List<Kip848Member> live = new ArrayList<>();

    @Override
    public String usage() {
        return "TOPIC GROUP PARTITIONS";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 3, this);
        this.bootstrap = bootstrap;
        topic = args[0];
        group = args[1];
        all = Kip848Group.partitions(topic, Args.parseInt(args[2], "PARTITIONS"));
        try (Admin admin = Admin.create(Clients.base(bootstrap));
             OffsetSampler sampler = new OffsetSampler(Admin.create(Clients.base(bootstrap)), group)) {
            Kip848Group.createTopic(admin, topic, all.size());
            sampler.start();
            System.out.println("== upgrade: classic members replaced by consumer-protocol members");
            Kip848Producer up = new Kip848Producer(bootstrap, topic, group + "-up", ledger);
            up.start();
            List<Kip848Member> cs = List.of(member("c1", true), member("c2", true), member("c3", true));
            for (Kip848Member c : cs) {
                join(admin, c);
            }
            replace(admin, cs.get(0), member("k1", false), true);
            replace(admin, cs.get(1), member("k2", false), false);
            replace(admin, cs.get(2), member("k3", false), false);
            drain(admin, up, sampler, GroupType.CONSUMER);

            System.out.println("== downgrade: consumer-protocol members replaced by classic members");
            Kip848Producer down = new Kip848Producer(bootstrap, topic, group + "-down", ledger);
            down.start();
            List<Kip848Member> ks = List.copyOf(live);
            replace(admin, ks.get(0), member("c4", true), true);
            replace(admin, ks.get(1), member("c5", true), false);
            replace(admin, ks.get(2), member("c6", true), false);
            drain(admin, down, sampler, GroupType.CLASSIC);

            for (Kip848Member m : List.copyOf(live)) {
                leave(m);
            }
            for (Kip848Member m : started) {
                m.rethrow();
            }
            ConsumerGroupDescription d = Kip848Group.describe(admin, group);
            if (d.type() != GroupType.CLASSIC || d.groupState() != GroupState.EMPTY) {
                throw new ScenarioFailed("after every member left the group is " + d.type() + " " + d.groupState()
                    + ", want CLASSIC Empty");
            }
            System.out.println("ok: group " + group + " CLASSIC Empty after every member left");
            sampler.finish();
        } finally {
            for (Kip848Member m : started) {
                m.stop();
            }
        }
    }

    private Kip848Member member(String name, boolean classic) {
        String id = group + "-" + name;
        if (classic) {
            classicNames.add(id);
        }
        return new Kip848ThreadMember(id, bootstrap, group, classic ? CLASSIC : Map.of(),
            Kip848ThreadMember.byTopics(List.of(topic)), ledger);
    }

    private void join(Admin admin, Kip848Member m) throws Exception {
        started.add(m);
        m.start();
        live.add(m);
        awaitPoint(admin);
    }

    private void leave(Kip848Member m) throws Exception {
        m.stop();
        m.rethrow();
        live.remove(m);
    }

    /** Replaces OLD by NEW: OLD closes first when CLOSE_FIRST, else NEW joins first. */
    private void replace(Admin admin, Kip848Member old, Kip848Member neu, boolean closeFirst) throws Exception {
        System.out.println("-- " + neu.name() + " replaces " + old.name()
            + (closeFirst ? " (closed first)" : " (joins first)"));
        if (closeFirst) {
            leave(old);
            awaitPoint(admin);
            join(admin, neu);
        } else {
            join(admin, neu);
            leave(old);
            awaitPoint(admin);
        }
    }

    /** The group type the live members make: CONSUMER while any speaks the consumer protocol. */
    private GroupType expectedType() {
        return live.stream().allMatch(m -> classicNames.contains(m.name())) ? GroupType.CLASSIC : GroupType.CONSUMER;
    }

    private void awaitPoint(Admin admin) throws Exception {
        GroupType type = expectedType();
        String what = "stable " + type + " group of " + live.stream().map(Kip848Member::name).toList()
            + ", disjoint, balanced, non-empty sets covering " + all.size() + " partitions, as the group describes";
        String[] last = {""};
        Kip848Group.await(what, () -> {
            boolean covered = Kip848Group.covered(all, live);
            return describedAs(admin, type, last) && covered;
        }, live);
    }

    /**
     * Whether describeConsumerGroups shows the group Stable, of TYPE, with exactly the live
     * members and their own assignments; in a consumer group the classic members are the
     * ones not upgraded.
     */
    private boolean describedAs(Admin admin, GroupType type, String[] last) {
        ConsumerGroupDescription d;
        try {
            d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        } catch (ExecutionException e) {
            // Before the first member's JoinGroup the group does not exist yet.
            if (!(e.getCause() instanceof GroupIdNotFoundException)) {
                throw new IllegalStateException("describeConsumerGroups " + group + ": " + e, e);
            }
            if (!last[0].equals("not found")) {
                System.out.println("  describe: " + e.getCause());
                last[0] = "not found";
            }
            return false;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        Map<String, Set<TopicPartition>> want = new HashMap<>();
        live.forEach(m -> want.put(m.name(), m.assigned()));
        Map<String, Set<TopicPartition>> got = new HashMap<>();
        Map<String, Optional<Boolean>> upgraded = new TreeMap<>();
        boolean ok = d.type() == type && d.groupState() == GroupState.STABLE;
        for (MemberDescription m : d.members()) {
            got.put(m.clientId(), m.assignment().topicPartitions());
            upgraded.put(m.clientId(), m.upgraded());
            if (type == GroupType.CONSUMER) {
                ok &= m.upgraded().equals(Optional.of(!classicNames.contains(m.clientId())));
            }
        }
        ok &= got.equals(want);
        String now = d.type() + " " + d.groupState() + " members " + got + " upgraded " + upgraded;
        if (!ok && !now.equals(last[0])) {
            System.out.println("  describe: " + now);
            last[0] = now;
        }
        return ok;
    }

    /**
     * Ends a phase: the producer stops, the members read every record and commit the end
     * offsets; the ledger's and the sampler's rules hold and the group is of TYPE.
     */
    private void drain(Admin admin, Kip848Producer producer, OffsetSampler sampler, GroupType type) throws Exception {
        producer.stop();
        Kip848Group.await("every one of " + ledger.producedCount() + " records read", ledger::allRead, live);
        Kip848Group.await("the end offsets committed", () -> committedAtEnd(admin), live);
        System.out.println("ok: " + ledger.check());
        sampler.check();
        ConsumerGroupDescription d = Kip848Group.describe(admin, group);
        if (d.type() != type) {
            throw new ScenarioFailed("group " + group + " is " + d.type() + " at the end of the phase, want " + type);
        }
        System.out.println("ok: group " + group + " is " + type + " with " + d.members().size() + " members");
    }

    private boolean committedAtEnd(Admin admin) {
        try {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            all.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
            var ends = admin.listOffsets(latest).all().get();
            Map<TopicPartition, OffsetAndMetadata> committed =
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            for (TopicPartition tp : all) {
                OffsetAndMetadata c = committed.get(tp);
                if (c == null || c.offset() != ends.get(tp).offset()) {
                    return false;
                }
            }
            return true;
        } catch (Exception e) {
            throw new IllegalStateException("committed or end offsets of " + group + ": " + e, e);
        }
    }

    /**
     * Samples the group's committed offsets every second in its own thread and notes every
     * partition whose committed offset went back (or disappeared) since an earlier sample.
     */
    static final class OffsetSampler implements AutoCloseable {
        private static final Duration EVERY = Duration.ofSeconds(1);

        private final Admin admin;
        private final String group;
        private final Map<TopicPartition, Long> highest = new HashMap<>();
        private final List<String> wentBack = new ArrayList<>();
        private final List<String> errors = new ArrayList<>();
        private int samples;
        private volatile boolean stopping;
        private Thread thread;

        OffsetSampler(Admin admin, String group) {
            this.admin = admin;
            this.group = group;
        }

        void start() {
            thread = new Thread(this::loop, "offset-sampler");
            thread.start();
        }

        private void loop() {
            while (!stopping) {
                sample();
                try {
                    Thread.sleep(EVERY.toMillis());
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        /** One sample; synchronized so that two samples are compared in the order they were taken. */
        private synchronized void sample() {
            Map<TopicPartition, OffsetAndMetadata> now;
            try {
                now = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            } catch (Exception e) {
                errors.add(e.toString());
                return;
            }
            samples++;
            for (Map.Entry<TopicPartition, Long> h : highest.entrySet()) {
                OffsetAndMetadata o = now.get(h.getKey());
                if (o == null || o.offset() < h.getValue()) {
                    wentBack.add(h.getKey() + " from " + h.getValue() + " to " + (o == null ? "none" : o.offset())
                        + " (sample " + samples + ")");
                }
            }
            now.forEach((tp, o) -> {
                if (o != null) {
                    highest.merge(tp, o.offset(), Math::max);
                }
            });
        }

        /** Takes one more sample, then throws if any committed offset went back. */
        synchronized void check() throws ScenarioFailed {
            sample();
            if (!wentBack.isEmpty()) {
                throw new ScenarioFailed("committed offsets went back: " + wentBack);
            }
            System.out.println("ok: in " + samples + " samples of the committed offsets none went back (highest "
                + new TreeMap<>(highest.entrySet().stream().collect(java.util.stream.Collectors.toMap(
                    e -> e.getKey().partition(), Map.Entry::getValue))) + ")"
                + (errors.isEmpty() ? "" : "; " + errors.size() + " samples failed, first " + errors.get(0)));
        }

        /** Stops sampling; the final check. */
        void finish() throws Exception {
            stopping = true;
            thread.join();
            check();
        }

        @Override
        public void close() throws InterruptedException {
            stopping = true;
            if (thread != null) {
                thread.interrupt();
                thread.join();
            }
            admin.close();
        }
    }
}
