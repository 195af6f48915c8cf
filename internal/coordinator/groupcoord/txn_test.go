package groupcoord

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

// lastBatch is the header of the partition's last batch.
func lastBatch(t *testing.T, log *runtimetest.MemLog, partition int32) records.Header {
	t.Helper()
	buf, _, err := log.Read(context.Background(), partition, 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var last records.Header
	if _, err := records.Batches(buf, func(h records.Header, _ []byte) error { last = h; return nil }); err != nil {
		t.Fatal(err)
	}
	return last
}

// TestTransactionalOffsetsThroughTheLog: a TxnOffsetCommit is written as a
// transactional batch of its producer and stays pending (unseen by
// OffsetFetch, UNSTABLE_OFFSET_COMMIT with require_stable) until the
// marker writer reports the transaction's result; a reload replays pending
// offsets and completes them at the markers that follow.
func TestTransactionalOffsetsThroughTheLog(t *testing.T) {
	log := runtimetest.NewMemLog()
	c := startCoordinator(t, log, testGroupConfig())
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")
	p := c.PartitionFor("g")
	tp := kafka.TopicPartition{Topic: "t"}
	fetch := func(stable bool) group.FetchedOffset {
		t.Helper()
		offs, code := c.FetchOffsets(ctx, "g", []kafka.TopicPartition{tp}, stable)
		if code != 0 {
			t.Fatalf("fetch: %v", kerr.ErrorForCode(code))
		}
		return offs[0]
	}
	txnCommit := func(producer int64, offset int64) {
		t.Helper()
		res := c.CommitTransactionalOffsets(ctx, group.TxnCommitRequest{GroupID: "g", ProducerID: producer, ProducerEpoch: 1, GenerationID: -1,
			Partitions: []group.CommitPartition{{TP: tp, Offset: offset, LeaderEpoch: -1}}})
		if res.Errors[0] != 0 {
			t.Fatalf("txn commit: %v", kerr.ErrorForCode(res.Errors[0]))
		}
		if h := lastBatch(t, log, p); !h.IsTransactional() || h.ProducerID != producer || h.ProducerEpoch != 1 {
			t.Fatalf("offsets written as %+v, want a transactional batch of producer %d/1", h, producer)
		}
	}
	// The marker writer: the marker is durable, then the coordinator learns.
	endTxn := func(producer int64, commit bool) {
		t.Helper()
		if _, err := log.Append(ctx, p, recordstest.Marker(t, commit, 0, 0, recordstest.Producer(producer, 1, -1))); err != nil {
			t.Fatal(err)
		}
		c.CompleteTransaction(ctx, producer, []int32{p}, commit)
	}
	reload := func(epoch int32) {
		t.Helper()
		c.image = offsetsImage(t, 3, testNode, epoch)
		c.ApplyImage(c.image)
		waitLoaded(t, c.GroupCoordinator, "g")
	}

	txnCommit(7, 10)
	if f := fetch(false); f.Offset != -1 || f.ErrorCode != 0 {
		t.Fatalf("pending offset seen: %+v", f)
	}
	if f := fetch(true); f.ErrorCode != kerr.UnstableOffsetCommit.Code || f.Offset != -1 {
		t.Fatalf("require_stable with a pending offset: %+v", f)
	}
	endTxn(7, true)
	if f := fetch(true); f.Offset != 10 || f.ErrorCode != 0 {
		t.Fatalf("after the commit marker: %+v", f)
	}

	txnCommit(8, 20)
	reload(1)
	if f := fetch(true); f.ErrorCode != kerr.UnstableOffsetCommit.Code {
		t.Fatalf("replayed pending offset: %+v", f)
	}
	endTxn(8, false)
	if f := fetch(true); f.Offset != 10 || f.ErrorCode != 0 {
		t.Fatalf("after the abort marker: %+v", f)
	}
	reload(2)
	if f := fetch(true); f.Offset != 10 || f.ErrorCode != 0 {
		t.Fatalf("after replaying both markers: %+v", f)
	}
	// A partition this node does not run: nothing to wait for.
	c.CompleteTransaction(ctx, 9, []int32{99}, true)
}
