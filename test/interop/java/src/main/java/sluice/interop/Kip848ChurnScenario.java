package sluice.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;

/**
 * KIP-848 (group.protocol=consumer) with the server-side assignor ASSIGNOR
 * (group.remote.assignor): under a live producer, members a, b and c join one by one, then
 * a and b leave one by one; at each of the five stable points the members' assignments
 * are non-empty, disjoint, balanced and cover the topic, and ConsumerGroupDescribe shows
 * the same. The producer stops, c reads everything and leaves. Every record written was
 * read, duplicates only after a revocation without commit (see {@link Kip848Ledger}), and
 * the group is Empty with the end offsets committed.
 */
final class Kip848ChurnScenario implements Scenario {
    @Override
    public String usage() {
        return "TOPIC GROUP PARTITIONS ASSIGNOR";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 4, this);
        String topic = args[0];
        String group = args[1];
        int partitions = Args.parseInt(args[2], "PARTITIONS");
        String assignor = args[3];
        Set<TopicPartition> all = Kip848Group.partitions(topic, partitions);
        Kip848Ledger ledger = new Kip848Ledger();
        List<Kip848Member> members = new ArrayList<>();
        for (String name : List.of("a", "b", "c")) {
            members.add(new Kip848ThreadMember(group + "-" + name, bootstrap, group,
                Map.of(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor),
                Kip848ThreadMember.byTopics(List.of(topic)), ledger));
        }
        Kip848Producer producer = new Kip848Producer(bootstrap, topic, group, ledger);
        List<Kip848Member> live = new ArrayList<>();
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            Kip848Group.createTopic(admin, topic, partitions);
            producer.start();
            for (Kip848Member m : members) {
                m.start();
                live.add(m);
                Kip848Group.awaitStable(admin, group, all, live, assignor);
            }
            for (Kip848Member m : members.subList(0, 2)) {
                m.stop();
                live.remove(m);
                Kip848Group.awaitStable(admin, group, all, live, assignor);
            }
            producer.stop();
            Kip848Group.await("c read all " + ledger.producedCount() + " records", ledger::allRead, live);
            members.get(2).stop();
            for (Kip848Member m : members) {
                m.rethrow();
            }
            System.out.println("ok: " + ledger.check());
            Kip848Group.checkCommittedAtEnd(admin, group, all);
        } finally {
            for (Kip848Member m : members) {
                m.stop();
            }
        }
    }
}
