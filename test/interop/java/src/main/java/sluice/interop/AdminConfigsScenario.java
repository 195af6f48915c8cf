package sluice.interop;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * describeConfigs round trip: creates a topic with one config override, requires the
 * override back as a DYNAMIC_TOPIC_CONFIG entry and an untouched key at its default,
 * requires the broker resource to carry Kafka's defaults (KAFKA-FACTS: clients read the full
 * set), deletes the topic and requires describeConfigs on it to fail with
 * UNKNOWN_TOPIC_OR_PARTITION.
 */
final class AdminConfigsScenario implements Scenario {
    static final long DELETE_DEADLINE_MS = 30_000;
    static final String RETENTION_MS = "123456789";

    @Override
    public String usage() {
        return "(no arguments)";
    }

    @Override
    public void run(String bootstrap, String[] args) throws Exception {
        Args.expect(args, 0, this);
        String topic = "interop-configs-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = Admin.create(Clients.base(bootstrap))) {
            NewTopic newTopic = new NewTopic(topic, Optional.of(2), Optional.empty())
                    .configs(Map.of("retention.ms", RETENTION_MS));
            admin.createTopics(List.of(newTopic)).all().get();
            System.out.println("createTopics: " + topic + " with retention.ms=" + RETENTION_MS);

            ConfigResource topicResource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            Config topicConfig = describe(admin, topicResource);
            expect(topicConfig, topicResource, "retention.ms", RETENTION_MS, ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG);
            expect(topicConfig, topicResource, "cleanup.policy", "delete", ConfigEntry.ConfigSource.DEFAULT_CONFIG);
            System.out.println("describeConfigs topic: " + topicConfig.entries().size() + " entries, override and default as set");

            Node node = admin.describeCluster().nodes().get().iterator().next();
            ConfigResource brokerResource = new ConfigResource(ConfigResource.Type.BROKER, node.idString());
            Config brokerConfig = describe(admin, brokerResource);
            expect(brokerConfig, brokerResource, "message.max.bytes", "1048588", null);
            expect(brokerConfig, brokerResource, "log.retention.hours", "168", null);
            expect(brokerConfig, brokerResource, "offsets.topic.num.partitions", "50", null);
            System.out.println("describeConfigs broker " + node.idString() + ": " + brokerConfig.entries().size() + " entries");

            admin.deleteTopics(List.of(topic)).all().get();
            long deadline = System.currentTimeMillis() + DELETE_DEADLINE_MS;
            while (admin.listTopics().names().get().contains(topic)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new ScenarioFailed(topic + " still listed " + DELETE_DEADLINE_MS + " ms after deleteTopics");
                }
                Thread.sleep(200);
            }
            try {
                describe(admin, topicResource);
                throw new ScenarioFailed("describeConfigs on deleted topic " + topic + " succeeded");
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw new ScenarioFailed("describeConfigs on deleted topic " + topic + ": " + e.getCause()
                            + ", want UnknownTopicOrPartitionException");
                }
            }
            System.out.println("deleteTopics: " + topic + " gone; describeConfigs on it: UNKNOWN_TOPIC_OR_PARTITION");
        }
    }

    private static Config describe(Admin admin, ConfigResource resource) throws Exception {
        return admin.describeConfigs(List.of(resource)).all().get().get(resource);
    }

    /** Requires NAME = VALUE in the config, from SOURCE when SOURCE is not null. */
    private static void expect(Config config, ConfigResource resource, String name, String value,
            ConfigEntry.ConfigSource source) throws ScenarioFailed {
        if (config == null) {
            throw new ScenarioFailed("describeConfigs " + resource + ": no config returned");
        }
        ConfigEntry e = config.get(name);
        if (e == null) {
            throw new ScenarioFailed("describeConfigs " + resource + ": no " + name + " among " + config.entries().size()
                    + " entries");
        }
        if (!value.equals(e.value()) || (source != null && e.source() != source)) {
            throw new ScenarioFailed("describeConfigs " + resource + ": " + e + ", want value " + value
                    + (source == null ? "" : " source " + source));
        }
    }
}
