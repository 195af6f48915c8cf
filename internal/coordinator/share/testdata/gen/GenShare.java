// GenShare writes the golden files of coordinator/share's tests with Kafka's
// own classes: __share_group_state records built with Kafka's generated
// classes and serialized by its ShareCoordinatorRecordSerde (each read back
// through the same serde), the coordinator keys of SharePartitionKey with the
// partition of __share_group_state Kafka maps them to, and the state batches
// Kafka's PersisterStateBatchCombiner makes of fixed and random inputs. Run
// it with run.sh; the output is committed.
//
// records.golden: "case keyhex valuehex" ("-" for a tombstone's value).
// keys.golden: "coordinatorkey partitionOf50 partitionOf7".
// combine.golden: "start old new result", batches as first-last/state/count
// joined by ',' ("-" for none).

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.coordinator.common.runtime.CoordinatorRecord;
import org.apache.kafka.coordinator.share.PersisterStateBatchCombiner;
import org.apache.kafka.coordinator.share.ShareCoordinatorRecordSerde;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotKey;
import org.apache.kafka.coordinator.share.generated.ShareSnapshotValue;
import org.apache.kafka.coordinator.share.generated.ShareUpdateKey;
import org.apache.kafka.coordinator.share.generated.ShareUpdateValue;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.share.SharePartitionKey;
import org.apache.kafka.server.share.persister.PersisterStateBatch;

public class GenShare {
    static final Uuid TOPIC1 = new Uuid(0x0102030405060708L, 0x090a0b0c0d0e0f10L);
    static final ShareCoordinatorRecordSerde SERDE = new ShareCoordinatorRecordSerde();
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
        Files.write(dir.resolve(file), lines, StandardCharsets.UTF_8);
        lines.clear();
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        GenShare g = new GenShare();
        g.records();
        g.write(dir, "records.golden");
        g.keys();
        g.write(dir, "keys.golden");
        g.combine();
        g.write(dir, "combine.golden");
    }

    void records() {
        ShareSnapshotKey sk = new ShareSnapshotKey().setGroupId("grp").setTopicId(TOPIC1).setPartition(3);
        ShareUpdateKey uk = new ShareUpdateKey().setGroupId("grp").setTopicId(TOPIC1).setPartition(3);
        add("snapshot-empty", sk, new ShareSnapshotValue().setSnapshotEpoch(0).setStateEpoch(1).setLeaderEpoch(0)
            .setStartOffset(-1).setCreateTimestamp(1700000000000L).setWriteTimestamp(1700000000000L));
        add("snapshot-batches", sk, new ShareSnapshotValue().setSnapshotEpoch(7).setStateEpoch(2).setLeaderEpoch(5)
            .setStartOffset(100).setDeliveryCompleteCount(12).setCreateTimestamp(1700000000001L).setWriteTimestamp(1700000000002L)
            .setStateBatches(List.of(
                new ShareSnapshotValue.StateBatch().setFirstOffset(100).setLastOffset(109).setDeliveryState((byte) 2).setDeliveryCount((short) 1),
                new ShareSnapshotValue.StateBatch().setFirstOffset(110).setLastOffset(110).setDeliveryState((byte) 0).setDeliveryCount((short) 3),
                new ShareSnapshotValue.StateBatch().setFirstOffset(111).setLastOffset(Long.MAX_VALUE).setDeliveryState((byte) 4).setDeliveryCount((short) -1))));
        add("snapshot-unicode-group", new ShareSnapshotKey().setGroupId("gr\u00fcppe-\u65e5\u672c").setTopicId(Uuid.ZERO_UUID).setPartition(0),
            new ShareSnapshotValue().setSnapshotEpoch(1).setStateEpoch(0).setLeaderEpoch(-1).setStartOffset(0)
                .setDeliveryCompleteCount(0).setCreateTimestamp(0).setWriteTimestamp(-5));
        add("snapshot-tombstone", sk, null);
        add("update-empty", uk, new ShareUpdateValue().setSnapshotEpoch(0).setLeaderEpoch(-1).setStartOffset(-1));
        add("update-batches", uk, new ShareUpdateValue().setSnapshotEpoch(3).setLeaderEpoch(9).setStartOffset(42)
            .setDeliveryCompleteCount(2147483647)
            .setStateBatches(List.of(
                new ShareUpdateValue.StateBatch().setFirstOffset(42).setLastOffset(50).setDeliveryState((byte) 0).setDeliveryCount((short) 2))));
    }

    void keys() {
        String[] groups = {"grp", "g", "share-group-1", "a:b", "\u00e9t\u00e9", "\ud83d\ude00emoji", ""};
        Uuid[] topics = {TOPIC1, Uuid.ZERO_UUID, new Uuid(-1L, -1L), new Uuid(0x7edcba9876543210L, 0x0011223344556677L)};
        int[] parts = {0, 1, 7, 49, 1000, 2147483647};
        for (String g : groups) for (Uuid t : topics) for (int p : parts) {
            String key = SharePartitionKey.asCoordinatorKey(g, t, p);
            int h = Utils.abs(key.hashCode());
            lines.add(key + " " + (h % 50) + " " + (h % 7));
        }
    }

    void combine() {
        // Fixed cases: the shapes of KIP-932's examples.
        comb(-1, List.of(), List.of());
        comb(-1, List.of(b(0, 9, 0, 1)), List.of());
        comb(-1, List.of(), List.of(b(0, 9, 0, 1)));
        comb(-1, List.of(b(0, 9, 0, 1)), List.of(b(0, 9, 2, 1)));
        comb(-1, List.of(b(0, 9, 2, 1)), List.of(b(0, 9, 0, 1)));
        comb(-1, List.of(b(0, 9, 0, 1)), List.of(b(3, 5, 2, 1)));
        comb(-1, List.of(b(0, 9, 0, 2)), List.of(b(3, 5, 2, 1)));
        comb(-1, List.of(b(0, 4, 0, 1)), List.of(b(5, 9, 0, 1)));
        comb(-1, List.of(b(0, 4, 0, 1)), List.of(b(6, 9, 0, 1)));
        comb(5, List.of(b(0, 9, 0, 1)), List.of(b(2, 3, 2, 1)));
        comb(10, List.of(b(0, 9, 0, 1)), List.of());
        comb(3, List.of(b(0, 9, 0, 1)), List.of());
        comb(-1, List.of(b(0, 100, 0, 1), b(10, 20, 4, 3)), List.of(b(15, 30, 2, 2), b(25, 40, 0, 2)));
        Random r = new Random(932);
        for (int i = 0; i < 400; i++) {
            long start = r.nextInt(4) == 0 ? -1 : r.nextInt(30);
            comb(start, random(r), random(r));
        }
    }

    List<PersisterStateBatch> random(Random r) {
        int n = r.nextInt(5);
        List<PersisterStateBatch> out = new ArrayList<>();
        byte[] states = {0, 2, 4};
        for (int i = 0; i < n; i++) {
            long first = r.nextInt(40);
            long last = first + r.nextInt(12);
            out.add(b(first, last, states[r.nextInt(3)], r.nextInt(4)));
        }
        return out;
    }

    static PersisterStateBatch b(long first, long last, int state, int count) {
        return new PersisterStateBatch(first, last, (byte) state, (short) count);
    }

    void comb(long start, List<PersisterStateBatch> old, List<PersisterStateBatch> neu) {
        List<PersisterStateBatch> out = new PersisterStateBatchCombiner(old, neu, start).combineStateBatches();
        lines.add(start + " " + fmt(old) + " " + fmt(neu) + " " + fmt(out));
    }

    static String fmt(List<PersisterStateBatch> l) {
        if (l.isEmpty()) return "-";
        return l.stream().map(x -> x.firstOffset() + "-" + x.lastOffset() + "/" + x.deliveryState() + "/" + x.deliveryCount())
            .collect(Collectors.joining(","));
    }
}
