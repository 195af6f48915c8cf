package sluice.interop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Shared pieces of the KIP-848 scenarios: the consumer settings (group.protocol=consumer,
 * otherwise the client's defaults but auto.offset.reset=earliest, so that a record written
 * before a member's position is first resolved is not skipped), waiting for a condition,
 * and the stable-point check (the members' own assignments and the group as
 * ConsumerGroupDescribe shows it).
 */
final class Kip848Group {
    static final Duration STEP_DEADLINE = Duration.ofSeconds(60);

    private Kip848Group() {
    }

    static Properties consumerProps(String bootstrap, String group, String member) {
        Properties p = Clients.base(bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, member);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return p;
    }

    static Set<TopicPartition> partitions(String topic, int count) {
        Set<TopicPartition> all = new HashSet<>();
        for (int p = 0; p < count; p++) {
            all.add(new TopicPartition(topic, p));
        }
        return all;
    }

    static void createTopic(Admin admin, String topic, int partitions) throws Exception {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
    }

    /** Waits up to STEP_DEADLINE for DONE, checking the members for failures; says how long it took. */
    static void await(String what, BooleanSupplier done, List<? extends Kip848Member> members) throws Exception {
        long started = System.nanoTime();
        long deadline = started + STEP_DEADLINE.toNanos();
        while (!done.getAsBoolean()) {
            for (Kip848Member m : members) {
                m.rethrow();
            }
            if (System.nanoTime() > deadline) {
                throw new ScenarioFailed("not within " + STEP_DEADLINE + ": " + what + " (" + owners(members) + ")");
            }
            Thread.sleep(100);
        }
        System.out.println("ok: " + what + " (" + (System.nanoTime() - started) / 1_000_000 + " ms; " + owners(members)
            + ")");
    }

    static String owners(List<? extends Kip848Member> members) {
        List<String> out = new ArrayList<>();
        for (Kip848Member m : members) {
            out.add(m.name() + " owns " + new java.util.TreeSet<>(m.assigned().stream().map(TopicPartition::toString)
                .toList()));
        }
        return String.join(", ", out);
    }

    /**
     * Whether the LIVE members' own assignments are a stable point: each non-empty, pairwise
     * disjoint, covering ALL, and balanced (sizes differ by at most one, as both server-side
     * assignors give for one topic).
     */
    static boolean covered(Set<TopicPartition> all, List<? extends Kip848Member> live) {
        Set<TopicPartition> union = new HashSet<>();
        int sum = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (Kip848Member m : live) {
            Set<TopicPartition> s = m.assigned();
            union.addAll(s);
            sum += s.size();
            min = Math.min(min, s.size());
            max = Math.max(max, s.size());
        }
        return min > 0 && union.equals(all) && sum == all.size() && max - min <= 1;
    }

    /**
     * Waits for a stable point of LIVE, then checks that ConsumerGroupDescribe agrees: a
     * consumer-protocol group, Stable, with exactly the live members (by client id), each a
     * consumer-protocol member whose assignment is its target assignment and what the
     * member itself owns, and the group's assignor ASSIGNOR (null: not checked).
     */
    static void awaitStable(Admin admin, String group, Set<TopicPartition> all, List<? extends Kip848Member> live,
        String assignor) throws Exception {
        String what = "stable point: " + live.stream().map(Kip848Member::name).toList()
            + " own disjoint, balanced, non-empty sets covering " + all.size() + " partitions, as the group describes";
        String[] last = {""};
        await(what, () -> covered(all, live) && describedAs(admin, group, live, assignor, last), live);
        ConsumerGroupDescription d = describe(admin, group);
        System.out.println("  group epoch " + d.groupEpoch().orElse(-1) + ", target assignment epoch "
            + d.targetAssignmentEpoch().orElse(-1) + ", assignor " + d.partitionAssignor());
    }

    static ConsumerGroupDescription describe(Admin admin, String group) {
        try {
            return admin.describeConsumerGroups(List.of(group)).all().get().get(group);
        } catch (Exception e) {
            throw new IllegalStateException("describeConsumerGroups " + group + ": " + e, e);
        }
    }

    private static boolean describedAs(Admin admin, String group, List<? extends Kip848Member> live, String assignor,
        String[] last) {
        ConsumerGroupDescription d = describe(admin, group);
        Map<String, Set<TopicPartition>> want = new HashMap<>();
        for (Kip848Member m : live) {
            want.put(m.name(), m.assigned());
        }
        Map<String, Set<TopicPartition>> got = new HashMap<>();
        boolean ok = d.type() == GroupType.CONSUMER && d.groupState() == GroupState.STABLE
            && (assignor == null || assignor.equals(d.partitionAssignor()));
        for (MemberDescription m : d.members()) {
            Set<TopicPartition> a = m.assignment().topicPartitions();
            got.put(m.clientId(), a);
            ok &= m.upgraded().orElse(true) && m.targetAssignment().map(t -> t.topicPartitions().equals(a)).orElse(false);
        }
        ok &= got.equals(want);
        String now = d.type() + " " + d.groupState() + " assignor " + d.partitionAssignor() + " members " + got;
        if (!ok && !now.equals(last[0])) {
            System.out.println("  describe: " + now);
            last[0] = now;
        }
        return ok;
    }

    /** Checks the group is Empty and has committed, on every partition of ALL, the end offset. */
    static void checkCommittedAtEnd(Admin admin, String group, Set<TopicPartition> all) throws Exception {
        ConsumerGroupDescription d = describe(admin, group);
        if (d.groupState() != GroupState.EMPTY || !d.members().isEmpty()) {
            throw new ScenarioFailed("group " + group + " is " + d.groupState() + " with " + d.members().size()
                + " members after every member left, want Empty");
        }
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        all.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
        var ends = admin.listOffsets(latest).all().get();
        Map<TopicPartition, OffsetAndMetadata> committed =
            admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
        for (TopicPartition tp : all) {
            OffsetAndMetadata c = committed.get(tp);
            long end = ends.get(tp).offset();
            if (c == null || c.offset() != end) {
                throw new ScenarioFailed("group " + group + " committed " + c + " on " + tp + ", want the end offset " + end);
            }
        }
        System.out.println("ok: group " + group + " Empty, committed the end offset on all " + all.size() + " partitions");
    }
}
