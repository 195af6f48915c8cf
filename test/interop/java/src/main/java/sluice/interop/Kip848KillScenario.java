package sluice.interop;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;

/**
 * A KIP-848 member killed without leaving: members a and b (threads) and c (a JVM of its
 * own) share TOPIC under a live producer; c's JVM is killed (SIGKILL) at a stable point.
 * Its partitions must stay with nobody until the broker's session timeout
 * (SESSION_MS, the broker's group.consumer.session.timeout.ms; HEARTBEAT_MS its heartbeat
 * interval) expires it: a and b own the whole topic no sooner than SESSION_MS less one
 * heartbeat interval and a second of slack after the kill, and no later than the step
 * deadline. Then the group describes a and b alone, every record is read (c's uncommitted
 * ones again, which the ledger allows: c lost them uncommitted) and the end offsets are
 * committed.
 */
final class Kip848KillScenario implements Scenario {
    @Override
    public String usage() {
        return "TOPIC GROUP PARTITIONS SESSION_MS HEARTBEAT_MS";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 5, this);
        String topic = args[0];
        String group = args[1];
        int partitions = Args.parseInt(args[2], "PARTITIONS");
        long sessionMs = Args.parseLong(args[3], "SESSION_MS");
        long heartbeatMs = Args.parseLong(args[4], "HEARTBEAT_MS");
        Set<TopicPartition> all = Kip848Group.partitions(topic, partitions);
        Kip848Ledger ledger = new Kip848Ledger();
        Kip848ThreadMember a = thread(bootstrap, group, topic, "a", ledger);
        Kip848ThreadMember b = thread(bootstrap, group, topic, "b", ledger);
        Path log = Files.createTempFile("kip848-kill-c", ".log");
        Kip848ProcessMember c = new Kip848ProcessMember(group + "-c",
            Kip848ProcessMember.javaMember(bootstrap, topic, group, group + "-c", "-"), log, ledger);
        Kip848Producer producer = new Kip848Producer(bootstrap, topic, group, ledger);
        List<Kip848Member> live = new ArrayList<>();
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            Kip848Group.createTopic(admin, topic, partitions);
            producer.start();
            for (Kip848Member m : List.of(a, b, c)) {
                m.start();
                live.add(m);
                Kip848Group.awaitStable(admin, group, all, live, null);
            }
            Kip848Group.await("c read some records", () -> ledger.readCount(c.name()) > 0, live);
            live.remove(c);
            long killed = System.nanoTime();
            c.kill();
            System.out.println("killed c's JVM (SIGKILL) while it owned " + c.assigned());
            Kip848Group.await("a and b own the whole topic after c's session timed out", () ->
                Kip848Group.covered(all, live), live);
            long tookMs = (System.nanoTime() - killed) / 1_000_000;
            long earliest = sessionMs - heartbeatMs - 1000;
            if (tookMs < earliest) {
                throw new ScenarioFailed("c's partitions were reassigned " + tookMs + " ms after the kill, before its "
                    + sessionMs + " ms session could have timed out (earliest " + earliest + " ms)");
            }
            System.out.println("ok: c's partitions reassigned " + tookMs + " ms after the kill (session " + sessionMs
                + " ms, heartbeat " + heartbeatMs + " ms)");
            Kip848Group.awaitStable(admin, group, all, live, null);
            producer.stop();
            Kip848Group.await("a and b read all " + ledger.producedCount() + " records", ledger::allRead, live);
            a.stop();
            b.stop();
            a.rethrow();
            b.rethrow();
            System.out.println("ok: " + ledger.check());
            Kip848Group.checkCommittedAtEnd(admin, group, all);
        } finally {
            a.stop();
            b.stop();
            c.kill();
        }
    }

    private static Kip848ThreadMember thread(String bootstrap, String group, String topic, String name,
        Kip848Ledger ledger) {
        return new Kip848ThreadMember(group + "-" + name, bootstrap, group, Map.of(),
            Kip848ThreadMember.byTopics(List.of(topic)), ledger);
    }
}
