package sluice.interop;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;

/**
 * A KIP-848 group shared by a Java KafkaConsumer (j, a thread) and another client running
 * as a process that speaks {@link Kip848MemberScenario}'s line protocol (COMMAND..., with
 * client id NAME; the franz-go program of test/interop/groups848): under a live producer
 * j joins alone, the other member joins (a stable point where both own partitions, both
 * consumer-protocol members as ConsumerGroupDescribe shows them), j leaves and the other
 * member takes the whole topic from j's committed offsets. Every record is read,
 * duplicates only after a revocation without commit, and the group's committed offsets
 * are the end offsets once the other member has left.
 */
final class Kip848MixedScenario implements Scenario {
    @Override
    public String usage() {
        return "TOPIC GROUP PARTITIONS NAME COMMAND...";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        if (args.length < 5) {
            throw new ScenarioFailed("expected arguments: " + usage());
        }
        String topic = args[0];
        String group = args[1];
        int partitions = Args.parseInt(args[2], "PARTITIONS");
        String name = args[3];
        List<String> command = Arrays.asList(args).subList(4, args.length);
        Set<TopicPartition> all = Kip848Group.partitions(topic, partitions);
        Kip848Ledger ledger = new Kip848Ledger();
        Kip848ThreadMember j = new Kip848ThreadMember(group + "-java", bootstrap, group, Map.of(),
            Kip848ThreadMember.byTopics(List.of(topic)), ledger);
        Path log = Files.createTempFile("kip848-" + name, ".log");
        Kip848ProcessMember other = new Kip848ProcessMember(name, command, log, ledger);
        Kip848Producer producer = new Kip848Producer(bootstrap, topic, group, ledger);
        List<Kip848Member> live = new ArrayList<>();
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            Kip848Group.createTopic(admin, topic, partitions);
            producer.start();
            for (Kip848Member m : List.of(j, other)) {
                m.start();
                live.add(m);
                Kip848Group.awaitStable(admin, group, all, live, null);
            }
            Kip848Group.await(name + " read records", () -> ledger.readCount(name) > 0, live);
            j.stop();
            live.remove(j);
            Kip848Group.awaitStable(admin, group, all, live, null);
            producer.stop();
            Kip848Group.await(name + " read all " + ledger.producedCount() + " records", ledger::allRead, live);
            other.stop();
            j.rethrow();
            other.rethrow();
            System.out.println("ok: " + ledger.check());
            Kip848Group.checkCommittedAtEnd(admin, group, all);
        } catch (Exception e) {
            System.out.println(name + "'s stderr, last lines:\n" + Kip848ProcessMember.tail(log));
            throw e;
        } finally {
            j.stop();
            other.stop();
        }
    }
}
