// GenShareRecords writes the golden bytes of consumerrec's share group
// tests: share group records built with Kafka's generated classes and
// serialized by Kafka's GroupCoordinatorRecordSerde, as the group
// coordinator writes them to __consumer_offsets. Each record is read back
// through the same serde before it is written out. Run it with run.sh; the
// output is committed.
//
// Output: one file per record type, NAME.golden, one line per case:
// "case keyhex valuehex", with "-" as the value of a tombstone.

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.group.GroupCoordinatorRecordSerde;
import org.apache.kafka.coordinator.group.generated.ShareGroupCurrentMemberAssignmentKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupCurrentMemberAssignmentValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupMemberMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupMemberMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupStatePartitionMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupStatePartitionMetadataValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMemberKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMemberValue;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMetadataKey;
import org.apache.kafka.coordinator.group.generated.ShareGroupTargetAssignmentMetadataValue;
import org.apache.kafka.server.common.ApiMessageAndVersion;

public class GenShareRecords {
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
        GenShareRecords g = new GenShareRecords();
        g.metadata();
        g.write(dir, "ShareGroupMetadata");
        g.memberMetadata();
        g.write(dir, "ShareGroupMemberMetadata");
        g.targetAssignmentMetadata();
        g.write(dir, "ShareGroupTargetAssignmentMetadata");
        g.targetAssignmentMember();
        g.write(dir, "ShareGroupTargetAssignmentMember");
        g.currentMemberAssignment();
        g.write(dir, "ShareGroupCurrentMemberAssignment");
        g.statePartitionMetadata();
        g.write(dir, "ShareGroupStatePartitionMetadata");
    }

    void metadata() {
        ShareGroupMetadataKey key = new ShareGroupMetadataKey().setGroupId("grp");
        add("epoch", key, new ShareGroupMetadataValue().setEpoch(5));
        add("hash", key, new ShareGroupMetadataValue().setEpoch(42).setMetadataHash(0x0123456789abcdefL));
        add("negative-hash", new ShareGroupMetadataKey().setGroupId(""),
            new ShareGroupMetadataValue().setEpoch(0).setMetadataHash(-7L));
        add("tombstone", key, null);
    }

    void memberMetadata() {
        ShareGroupMemberMetadataKey key = new ShareGroupMemberMetadataKey().setGroupId("grp").setMemberId("member-1");
        add("member", key, new ShareGroupMemberMetadataValue()
            .setRackId(null).setClientId("client-1").setClientHost("/127.0.0.1")
            .setSubscribedTopicNames(List.of("a", "b")));
        add("rack", key, new ShareGroupMemberMetadataValue()
            .setRackId("rack-a").setClientId("c").setClientHost("h").setSubscribedTopicNames(List.of()));
        add("defaults", key, new ShareGroupMemberMetadataValue());
        add("tombstone", key, null);
    }

    void targetAssignmentMetadata() {
        ShareGroupTargetAssignmentMetadataKey key = new ShareGroupTargetAssignmentMetadataKey().setGroupId("grp");
        add("epoch", key, new ShareGroupTargetAssignmentMetadataValue().setAssignmentEpoch(3));
        add("timestamp", key, new ShareGroupTargetAssignmentMetadataValue()
            .setAssignmentEpoch(7).setAssignmentTimestamp(1764780000000L));
        add("tombstone", key, null);
    }

    void targetAssignmentMember() {
        ShareGroupTargetAssignmentMemberKey key = new ShareGroupTargetAssignmentMemberKey().setGroupId("grp").setMemberId("member-1");
        add("empty", key, new ShareGroupTargetAssignmentMemberValue());
        add("topics", key, new ShareGroupTargetAssignmentMemberValue().setTopicPartitions(List.of(
            new ShareGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(TOPIC1).setPartitions(List.of(0, 1, 2)),
            new ShareGroupTargetAssignmentMemberValue.TopicPartition().setTopicId(TOPIC2).setPartitions(List.of()))));
        add("tombstone", key, null);
    }

    void currentMemberAssignment() {
        ShareGroupCurrentMemberAssignmentKey key = new ShareGroupCurrentMemberAssignmentKey().setGroupId("grp").setMemberId("member-1");
        add("stable", key, new ShareGroupCurrentMemberAssignmentValue()
            .setMemberEpoch(10).setPreviousMemberEpoch(9).setState((byte) 0)
            .setAssignedPartitions(List.of(
                new ShareGroupCurrentMemberAssignmentValue.TopicPartitions().setTopicId(TOPIC1).setPartitions(List.of(0, 1)))));
        add("empty", key, new ShareGroupCurrentMemberAssignmentValue());
        add("tombstone", key, null);
    }

    void statePartitionMetadata() {
        ShareGroupStatePartitionMetadataKey key = new ShareGroupStatePartitionMetadataKey().setGroupId("grp");
        add("empty", key, new ShareGroupStatePartitionMetadataValue());
        add("all", key, new ShareGroupStatePartitionMetadataValue()
            .setInitializingTopics(List.of(
                new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo()
                    .setTopicId(TOPIC1).setTopicName("orders").setPartitions(List.of(2, 3))))
            .setInitializedTopics(List.of(
                new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo()
                    .setTopicId(TOPIC1).setTopicName("orders").setPartitions(List.of(0, 1)),
                new ShareGroupStatePartitionMetadataValue.TopicPartitionsInfo()
                    .setTopicId(TOPIC2).setTopicName("paiements-\u00e9t\u00e9").setPartitions(List.of())))
            .setDeletingTopics(List.of(
                new ShareGroupStatePartitionMetadataValue.TopicInfo().setTopicId(TOPIC2).setTopicName("gone"))));
        add("tombstone", key, null);
    }
}
