package sluice.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;

/**
 * A static KIP-848 member restarted: dynamic members a and b and static member s
 * (group.instance.id GROUP-s) share TOPIC under a live producer. At a stable point s is
 * closed (a static member's leave keeps its assignment for the session timeout) and a new
 * consumer with the same group.instance.id is opened at once. It must get exactly s's
 * partitions back, within SESSION_MS, while a's and b's assignments never change and the
 * group epoch stays where it was (no reassignment). Then every record is read and the
 * end offsets are committed.
 */
final class Kip848StaticScenario implements Scenario {
    @Override
    public String usage() {
        return "TOPIC GROUP PARTITIONS SESSION_MS";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 4, this);
        String topic = args[0];
        String group = args[1];
        int partitions = Args.parseInt(args[2], "PARTITIONS");
        long sessionMs = Args.parseLong(args[3], "SESSION_MS");
        Set<TopicPartition> all = Kip848Group.partitions(topic, partitions);
        Kip848Ledger ledger = new Kip848Ledger();
        Kip848ThreadMember a = member(bootstrap, group, topic, "a", null, ledger);
        Kip848ThreadMember b = member(bootstrap, group, topic, "b", null, ledger);
        Kip848ThreadMember s = member(bootstrap, group, topic, "s", group + "-s", ledger);
        // The restarted static member: the same group.instance.id, a client id of its own
        // so that the checks tell the two apart.
        Kip848ThreadMember s2 = member(bootstrap, group, topic, "s2", group + "-s", ledger);
        Kip848Producer producer = new Kip848Producer(bootstrap, topic, group, ledger);
        List<Kip848Member> live = new ArrayList<>();
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            Kip848Group.createTopic(admin, topic, partitions);
            producer.start();
            for (Kip848Member m : List.of(a, b, s)) {
                m.start();
                live.add(m);
                Kip848Group.awaitStable(admin, group, all, live, null);
            }
            Set<TopicPartition> ownedA = a.assigned();
            Set<TopicPartition> ownedB = b.assigned();
            Set<TopicPartition> ownedS = s.assigned();
            int changesA = a.assignmentChanges();
            int changesB = b.assignmentChanges();
            int epoch = Kip848Group.describe(admin, group).groupEpoch().orElse(-1);
            long closed = System.nanoTime();
            s.stop();
            System.out.println("s closed in " + (System.nanoTime() - closed) / 1_000_000 + " ms");
            live.remove(s);
            s2.start();
            live.add(s2);
            Kip848Group.await("the restarted static member owns s's partitions " + ownedS,
                () -> s2.assigned().equals(ownedS), live);
            long tookMs = (System.nanoTime() - closed) / 1_000_000;
            if (tookMs >= sessionMs) {
                throw new ScenarioFailed("s's partitions came back " + tookMs + " ms after it closed, not within its "
                    + sessionMs + " ms session");
            }
            if (!a.assigned().equals(ownedA) || !b.assigned().equals(ownedB) || a.assignmentChanges() != changesA
                || b.assignmentChanges() != changesB) {
                throw new ScenarioFailed("a or b saw their assignment change while the static member restarted: a "
                    + ownedA + " -> " + a.assigned() + " (" + (a.assignmentChanges() - changesA) + " changes), b "
                    + ownedB + " -> " + b.assigned() + " (" + (b.assignmentChanges() - changesB) + " changes)");
            }
            Kip848Group.awaitStable(admin, group, all, live, null);
            int after = Kip848Group.describe(admin, group).groupEpoch().orElse(-1);
            if (after != epoch) {
                throw new ScenarioFailed("group epoch " + epoch + " before the static member's restart, " + after
                    + " after: the group was reassigned");
            }
            System.out.println("ok: static member back in " + tookMs + " ms with " + ownedS + "; a and b unchanged, group "
                + "epoch still " + epoch);
            producer.stop();
            Kip848Group.await("every record read", ledger::allRead, live);
            for (Kip848Member m : live) {
                m.stop();
                m.rethrow();
            }
            System.out.println("ok: " + ledger.check());
            // A static member's leave keeps it in the group until its session times out.
            Kip848Group.await("the static member's session expired, the group is Empty",
                () -> Kip848Group.describe(admin, group).members().isEmpty(), live);
            Kip848Group.checkCommittedAtEnd(admin, group, all);
        } finally {
            for (Kip848Member m : List.of(a, b, s, s2)) {
                m.stop();
            }
        }
    }

    private static Kip848ThreadMember member(String bootstrap, String group, String topic, String name,
        String instance, Kip848Ledger ledger) {
        Map<String, String> extra = instance == null ? Map.of() : Map.of(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instance);
        return new Kip848ThreadMember(group + "-" + name, bootstrap, group, extra,
            Kip848ThreadMember.byTopics(List.of(topic)), ledger);
    }
}
