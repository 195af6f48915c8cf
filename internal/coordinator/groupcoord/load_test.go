package groupcoord

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/vfs"
)

// replicatedOffsetsImage is an image in which testNode leads the single
// offsets partition at epoch 5 with replicas and ISR {testNode, 2}: node 2
// never fetches here, so the high watermark stays where it is while the
// leader's log grows.
func replicatedOffsetsImage(t *testing.T) (*metadata.Delta, *metadata.Image) {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	id := replicationtest.TopicID(7)
	recs := []metadata.Record{
		&metadata.RegisterBrokerRecord{BrokerID: testNode, BrokerEpoch: 1, Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9092}}},
		&metadata.TopicRecord{Name: OffsetsTopic, TopicID: id},
		&metadata.PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{testNode, 2}, ISR: []int32{testNode, 2}, Leader: testNode, LeaderEpoch: 5},
	}
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	return d, d.Apply()
}

// commitBatch is one offset commit record of group for tp, as a batch
// stamped now.
func commitBatch(t *testing.T, now time.Time, groupID string, tp kafka.TopicPartition, offset int64) []byte {
	t.Helper()
	key := kmsg.OffsetCommitKey{Version: 1, Group: groupID, Topic: tp.Topic, Partition: tp.Partition}
	val := kmsg.NewOffsetCommitValue()
	val.Version = 3
	val.Offset = offset
	val.LeaderEpoch = -1
	val.CommitTimestamp = now.UnixMilli()
	return recordstest.Batch(t, []recordstest.Record{{Timestamp: now.UnixMilli(), Key: key.AppendTo(nil), Value: val.AppendTo(nil)}})
}

// TestLoadReadsToLogEndNotHighWatermark: a new leader's high watermark can
// lag its log for a moment; a shard loading then must still see the commits
// in the leader's log (Kafka's loader reads to the log end), or a client
// fetching its offsets from the new coordinator would get older ones, or
// none, and reread what it had committed.
func TestLoadReadsToLogEndNotHighWatermark(t *testing.T) {
	fsys := vfs.NewMem()
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	logs := replicationtest.NewMemLogs(fsys, clk)
	rm, err := replication.NewReplicaManager(replication.Options{
		BrokerID: testNode, FS: fsys, Logs: logs, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		rm.Close()
		if err := logs.Close(); err != nil {
			t.Errorf("close logs: %v", err)
		}
	})
	delta, image := replicatedOffsetsImage(t)
	rm.ApplyDelta(delta, image)

	const groupID = "g"
	tp := kafka.TopicPartition{Topic: "orders", Partition: 3}
	// acks=1: in the leader's log, above the high watermark (node 2 has
	// not fetched it), as after a leader change.
	res := rm.AppendRecords(context.Background(), replication.AppendRequest{
		RequiredAcks: 1, Timeout: time.Second, ProduceVersion: 9, // as ReplicaWriter appends
		Partitions: []replication.AppendPartition{{TP: kafka.TopicPartition{Topic: OffsetsTopic, Partition: 0}, Records: commitBatch(t, clk.Now(), groupID, tp, 42)}},
	})
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("append: %+v", res)
	}
	if hw := rm.HighWatermarks()[kafka.TopicPartition{Topic: OffsetsTopic, Partition: 0}]; hw != 0 {
		t.Fatalf("high watermark %d, want 0 (the test needs the commit above it)", hw)
	}

	c, err := New(Options{
		NodeID: testNode, Group: testGroupConfig(), NumPartitions: 1, Writer: runtime.ReplicaWriter{Replicas: rm, Topic: OffsetsTopic},
		Image: func() *metadata.Image { return image }, Clock: clk, TickInterval: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.ApplyImage(image)
	waitLoaded(t, c, groupID)
	got, code := c.FetchOffsets(context.Background(), groupID, []kafka.TopicPartition{tp}, false)
	if code != 0 || len(got) != 1 {
		t.Fatalf("fetch offsets: code %d, %+v", code, got)
	}
	if got[0].Offset != 42 {
		t.Fatalf("loaded offset %d, want 42 from the leader's log above the high watermark", got[0].Offset)
	}
}
