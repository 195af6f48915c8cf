// GenRecords writes the golden bytes of consumerrec's tests: consumer group
// records built with Kafka's generated classes and serialized by Kafka's
// GroupCoordinatorRecordSerde, as the group coordinator writes them to
// __consumer_offsets. Each record is read back through the same serde before
// it is written out. Run it with run.sh; the output is committed.
//
// Output: one file per record type, NAME.golden, one line per case:
// "case keyhex valuehex", with "-" as the value of a tombstone.

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupCurrentMemberAssignmentValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupPartitionMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupPartitionMetadataValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupRegularExpressionValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataKey;
import org.apache.kafka.coordinator.group.generated.ConsumerGroupTargetAssignmentMetadataValue;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public class GenRecords {
    static final Uuid TOPIC1 = new Uuid(0x0102030405060708L, 0x090a0b0c0d0e0f10L);
    static final Uuid TOPIC2 = new Uuid(0xfedcba9876543210L, 0x0011223344556677L);

    static final GroupCoordinatorRecordSerde SERDE = new GroupCoordinatorRecordSerde();
    static final HexFormat HEX = HexFormat.of();

    final List<String> lines = new ArrayList<>();

    void add(String name, ApiMessage key, ApiMessage value) {
        CoordinatorRecord rec = value == null
            ? CoordinatorRecord.tombstone(key)
            : CoordinatorRecord.record(key, new ApiMessageAndVersion(value, (short) 0));
        byte[] k = SERDE.serializeKey(rec);
        byte[] v = SERDE.serializeValue(rec);
        CoordinatorRecord back = SERDE.deserialize(ByteBuffer.wrap(k), v == null ? null : ByteBuffer.wrap(v));
        if (!back.key().equals(key) || (value == null ? back.value() != null : !back.value().message().equals(value))) {
            throw new IllegalStateException(name + ": does not read back equal: " + back);
        }
        lines.add(name + " " + HEX.formatHex(k) + " " + (v == null ? "-" : HEX.formatHex(v)));
    }

    void write(Path dir, String file) throws IOException {
        Files.write(dir.resolve(file + ".golden"), lines, StandardCharsets.UTF_8);
        lines.clear();
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        GenRecords g = new GenRecords();
        g.metadata();
        g.write(dir, "ConsumerGroupMetadata");
        g.partitionMetadata();
        g.write(dir, "ConsumerGroupPartitionMetadata");
        g.memberMetadata();
        g.write(dir, "ConsumerGroupMemberMetadata");
        g.targetAssignmentMetadata();
        g.write(dir, "ConsumerGroupTargetAssignmentMetadata");
        g.targetAssignmentMember();
        g.write(dir, "ConsumerGroupTargetAssignmentMember");
        g.currentMemberAssignment();
        g.write(dir, "ConsumerGroupCurrentMemberAssignment");
        g.regularExpression();
        g.write(dir, "ConsumerGroupRegularExpression");
    }

    void metadata() {
        add("epoch", new ConsumerGroupMetadataKey().setGroupId("grp"),
            new ConsumerGroupMetadataValue().setEpoch(5));
        add("hash", new ConsumerGroupMetadataKey().setGroupId("grp"),
            new ConsumerGroupMetadataValue().setEpoch(42).setMetadataHash(0x0123456789abcdefL));
        add("negative-hash", new ConsumerGroupMetadataKey().setGroupId(""),
            new ConsumerGroupMetadataValue().setEpoch(0).setMetadataHash(-7L));
        add("tombstone", new ConsumerGroupMetadataKey().setGroupId("grp"), null);
    }

    void partitionMetadata() {
        add("empty", new ConsumerGroupPartitionMetadataKey().setGroupId("grp"),
            new ConsumerGroupPartitionMetadataValue());
        add("topics", new ConsumerGroupPartitionMetadataKey().setGroupId("grp"),
            new ConsumerGroupPartitionMetadataValue().setTopics(List.of(
                new ConsumerGroupPartitionMetadataValue.TopicMetadata()
                    .setTopicId(TOPIC1).setTopicName("orders").setNumPartitions(2)
                    .setPartitionMetadata(List.of(
                        new ConsumerGroupPartitionMetadataValue.PartitionMetadata()
                            .setPartition(0).setRacks(List.of("rack-a", "rack-b")),
                        new ConsumerGroupPartitionMetadataValue.PartitionMetadata()
                            .setPartition(1).setRacks(List.of()))),
                new ConsumerGroupPartitionMetadataValue.TopicMetadata()
                    .setTopicId(TOPIC2).setTopicName("paiements-\u00e9t\u00e9").setNumPartitions(0))));
        add("tombstone", new ConsumerGroupPartitionMetadataKey().setGroupId("grp"), null);
    }

    void memberMetadata() {
        ConsumerGroupMemberMetadataKey key = new ConsumerGroupMemberMetadataKey()
            .setGroupId("grp").setMemberId("member-1");
        // What the coordinator writes for a member of the consumer protocol.
        add("consumer", key, new ConsumerGroupMemberMetadataValue()
            .setInstanceId(null).setRackId(null).setClientId("client-1").setClientHost("/127.0.0.1")
            .setSubscribedTopicNames(List.of("a", "b")).setSubscribedTopicRegex(null)
            .setRebalanceTimeoutMs(30000).setServerAssignor("uniform").setClassicMemberMetadata(null));
        add("classic", key, new ConsumerGroupMemberMetadataValue()
            .setInstanceId("instance-1").setRackId("rack-a").setClientId("c").setClientHost("h")
            .setSubscribedTopicNames(List.of()).setSubscribedTopicRegex("orders-.*")
            .setRebalanceTimeoutMs(60000).setServerAssignor(null)
            .setClassicMemberMetadata(new ConsumerGroupMemberMetadataValue.ClassicMemberMetadata()
                .setSessionTimeoutMs(45000)
                .setSupportedProtocols(List.of(
                    new ConsumerGroupMemberMetadataValue.ClassicProtocol()
                        .setName("range").setMetadata(new byte[] {0, 3, 0, 0, 0, 1, (byte) 0xff}),
                    new ConsumerGroupMemberMetadataValue.ClassicProtocol()
                        .setName("cooperative-sticky").setMetadata(new byte[0])))));
        add("classic-no-protocols", key, new ConsumerGroupMemberMetadataValue()
            .setClientId("c").setClientHost("h")
            .setClassicMemberMetadata(new ConsumerGroupMemberMetadataValue.ClassicMemberMetadata()
                .setSessionTimeoutMs(10000)));
        // The constructor's defaults: empty strings, -1, default classic
        // metadata (not written).
        add("defaults", key, new ConsumerGroupMemberMetadataValue());
        add("tombstone", key, null);
    }

    void targetAssignmentMetadata() {
        ConsumerGroupTargetAssignmentMetadataKey key = new ConsumerGroupTargetAssignmentMetadataKey().setGroupId("grp");
        add("epoch", key, new ConsumerGroupTargetAssignmentMetadataValue().setAssignmentEpoch(3));
        add("timestamp", key, new ConsumerGroupTargetAssignmentMetadataValue()
            .setAssignmentEpoch(7).setAssignmentTimestamp(1764780000000L));
        add("tombstone", key, null);
    }

    void targetAssignmentMember() {
        ConsumerGroupTargetAssignmentMemberKey key = new ConsumerGroupTargetAssignmentMemberKey()
            .setGroupId("grp").setMemberId("member-1");
        add("empty", key, new ConsumerGroupTargetAssignmentMemberValue());
        add("topics", key, new ConsumerGroupTargetAssignmentMemberValue().setTopicPartitions(List.of(
            new ConsumerGroupTargetAssignmentMemberValue.TopicPartition()
                .setTopicId(TOPIC1).setPartitions(List.of(0, 1, 2)),
            new ConsumerGroupTargetAssignmentMemberValue.TopicPartition()
                .setTopicId(TOPIC2).setPartitions(List.of()))));
        add("tombstone", key, null);
    }

    void currentMemberAssignment() {
        ConsumerGroupCurrentMemberAssignmentKey key = new ConsumerGroupCurrentMemberAssignmentKey()
            .setGroupId("grp").setMemberId("member-1");
        add("stable", key, new ConsumerGroupCurrentMemberAssignmentValue()
            .setMemberEpoch(10).setPreviousMemberEpoch(9).setState((byte) 0)
            .setAssignedPartitions(List.of(new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions()
                .setTopicId(TOPIC1).setPartitions(List.of(0, 1)).setAssignmentEpochs(List.of(10, 9)))));
        add("epochs-null", key, new ConsumerGroupCurrentMemberAssignmentValue()
            .setMemberEpoch(3).setPreviousMemberEpoch(2).setState((byte) 1)
            .setAssignedPartitions(List.of(new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions()
                .setTopicId(TOPIC1).setPartitions(List.of(3)).setAssignmentEpochs(null))));
        add("revoking", key, new ConsumerGroupCurrentMemberAssignmentValue()
            .setMemberEpoch(-1).setPreviousMemberEpoch(-2).setState((byte) 2)
            .setAssignedPartitions(List.of(new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions()
                .setTopicId(TOPIC1).setPartitions(List.of())))
            .setPartitionsPendingRevocation(List.of(new ConsumerGroupCurrentMemberAssignmentValue.TopicPartitions()
                .setTopicId(TOPIC2).setPartitions(List.of(5, 6)).setAssignmentEpochs(List.of(4, 4)))));
        add("empty", key, new ConsumerGroupCurrentMemberAssignmentValue());
        add("tombstone", key, null);
    }

    void regularExpression() {
        ConsumerGroupRegularExpressionKey key = new ConsumerGroupRegularExpressionKey()
            .setGroupId("grp").setRegularExpression("orders-.*");
        add("topics", key, new ConsumerGroupRegularExpressionValue()
            .setTopics(List.of("orders-1", "orders-2")).setVersion(123L).setTimestamp(1764780000000L));
        add("empty", key, new ConsumerGroupRegularExpressionValue());
        add("tombstone", key, null);
    }
}
