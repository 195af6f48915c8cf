package sluice.interop;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.TopicPartition;

/**
 * A KIP-848 regular-expression subscription, MODE "broker" (subscribe(SubscriptionPattern):
 * the broker resolves the RE2J expression, SubscribedTopicRegex) or "client"
 * (subscribe(java.util.regex.Pattern): the client matches the topics its metadata lists
 * and heartbeats their names; metadata.max.age.ms is lowered to 2 s there, or the new
 * topic would be seen only after the default 5 minutes): members a and b subscribe to
 * "PREFIX-.*" while only PREFIX-one exists and a producer writes to it. Then PREFIX-two
 * and PREFIX_other (which does not match) are created: the group must pick up
 * PREFIX-two (a stable point covering both matching topics and nothing else), read the
 * records written to it, and never read PREFIX_other. PREFIX-two then grows by one
 * partition: the assignment must follow (a stable point covering the new partition too)
 * and records written to the new partition are read. Every record of the matching topics
 * is read and the end offsets of both are committed.
 */
final class Kip848RegexScenario implements Scenario {
    @Override
    public String usage() {
        return "PREFIX GROUP PARTITIONS broker|client";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 4, this);
        boolean client = args[3].equals("client");
        if (!client && !args[3].equals("broker")) {
            throw new ScenarioFailed("MODE must be broker or client, got " + args[3]);
        }
        String prefix = args[0];
        String group = args[1];
        int partitions = Args.parseInt(args[2], "PARTITIONS");
        String one = prefix + "-one";
        String two = prefix + "-two";
        String other = prefix + "_other";
        Set<TopicPartition> first = Kip848Group.partitions(one, partitions);
        Set<TopicPartition> both = new HashSet<>(first);
        both.addAll(Kip848Group.partitions(two, partitions));
        Kip848Ledger ledger = new Kip848Ledger();
        List<Kip848Member> live = new ArrayList<>();
        for (String name : List.of("a", "b")) {
            live.add(client
                ? new Kip848ThreadMember(group + "-" + name, bootstrap, group,
                    Map.of(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "2000"),
                    Kip848ThreadMember.byClientPattern(prefix + "-.*"), ledger)
                : new Kip848ThreadMember(group + "-" + name, bootstrap, group, Map.of(),
                    Kip848ThreadMember.byPattern(prefix + "-.*"), ledger));
        }
        Kip848Producer producer = new Kip848Producer(bootstrap, one, group, ledger);
        Kip848Producer stray = new Kip848Producer(bootstrap, other, group + "-stray", new Kip848Ledger());
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            Kip848Group.createTopic(admin, one, partitions);
            producer.start();
            for (Kip848Member m : live) {
                m.start();
            }
            Kip848Group.awaitStable(admin, group, first, live, null);
            Kip848Group.createTopic(admin, two, partitions);
            Kip848Group.createTopic(admin, other, partitions);
            System.out.println("created " + two + " and " + other + " while the group runs");
            Kip848Group.awaitStable(admin, group, both, live, null);
            producer.burst(two, 300);
            stray.burst(other, 100);
            admin.createPartitions(Map.of(two, NewPartitions.increaseTo(partitions + 1))).all().get();
            System.out.println("grew " + two + " to " + (partitions + 1) + " partitions");
            both.add(new TopicPartition(two, partitions));
            Kip848Group.awaitStable(admin, group, both, live, null);
            producer.burst(two, partitions, 100);
            producer.stop();
            stray.stop();
            Kip848Group.await("every record of " + one + " and " + two + " read", ledger::allRead, live);
            for (Kip848Member m : live) {
                m.stop();
                m.rethrow();
            }
            // A record of PREFIX_other read would be one the ledger never saw produced.
            System.out.println("ok: " + ledger.check());
            Kip848Group.checkCommittedAtEnd(admin, group, both);
        } finally {
            for (Kip848Member m : live) {
                m.stop();
            }
        }
    }
}
