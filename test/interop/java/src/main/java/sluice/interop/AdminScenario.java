package sluice.interop;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * Admin round trip on a fresh topic: createTopics, describeTopics, listTopics,
 * describeCluster, deleteTopics, and listTopics again until the topic is gone.
 */
final class AdminScenario implements Scenario {
    static final int PARTITIONS = 3;
    static final long DELETE_DEADLINE_MS = 30_000;
    static final long DESCRIBE_DEADLINE_MS = 15_000;

    @Override
    public String usage() {
        return "(no arguments)";
    }

    /**
     * Describes a topic createTopics has just made. The controller answers
     * createTopics once the topic is committed; the broker describeTopics goes
     * to may learn of it a moment later (after a controller failover, while
     * it finds the new leader), and answers UNKNOWN_TOPIC_OR_PARTITION until
     * then, as Kafka's brokers do: an application retries, so does this.
     */
    static TopicDescription describeNewTopic(Admin admin, String topic) throws Exception {
        long deadline = System.currentTimeMillis() + DESCRIBE_DEADLINE_MS;
        while (true) {
            try {
                return admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException) || System.currentTimeMillis() > deadline) {
                    throw e;
                }
                System.out.println("describeTopics: " + topic + " not known to the broker yet; retrying");
                Thread.sleep(200);
            }
        }
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 0, this);
        String topic = "interop-admin-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            DescribeClusterResult cluster = admin.describeCluster();
            String clusterId = cluster.clusterId().get();
            List<Node> nodes = List.copyOf(cluster.nodes().get());
            Node controller = cluster.controller().get();
            if (clusterId == null || clusterId.isEmpty() || nodes.isEmpty()) {
                throw new ScenarioFailed("describeCluster: id '" + clusterId + "', nodes " + nodes);
            }
            System.out.println("describeCluster: id " + clusterId + ", " + nodes.size() + " node(s), controller " + controller);

            admin.createTopics(List.of(new NewTopic(topic, Optional.of(PARTITIONS), Optional.empty()))).all().get();
            System.out.println("createTopics: " + topic);

            TopicDescription d = describeNewTopic(admin, topic);
            if (d == null || d.partitions().size() != PARTITIONS || d.topicId() == null) {
                throw new ScenarioFailed("describeTopics " + topic + ": " + d);
            }
            System.out.println("describeTopics: " + d.partitions().size() + " partitions, id " + d.topicId());

            Set<String> names = admin.listTopics().names().get();
            if (!names.contains(topic)) {
                throw new ScenarioFailed("listTopics does not contain " + topic + ": " + names);
            }
            System.out.println("listTopics: " + names.size() + " topic(s), including " + topic);

            admin.deleteTopics(List.of(topic)).all().get();
            long deadline = System.currentTimeMillis() + DELETE_DEADLINE_MS;
            while (admin.listTopics().names().get().contains(topic)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new ScenarioFailed(topic + " still listed " + DELETE_DEADLINE_MS + " ms after deleteTopics");
                }
                Thread.sleep(200);
            }
            System.out.println("deleteTopics: " + topic + " gone");
        }
    }
}
