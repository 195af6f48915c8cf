package groupcoord

import (
	"context"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// offsetsVerifier answers every verification with code, recording each.
type offsetsVerifier struct {
	mu    sync.Mutex
	code  int16
	calls []replication.VerifyRequest
}

func (v *offsetsVerifier) VerifyTransaction(_ context.Context, req replication.VerifyRequest) map[kafka.TopicPartition]int16 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls = append(v.calls, req)
	out := map[kafka.TopicPartition]int16{}
	for _, tp := range req.Partitions {
		out[tp] = v.code
	}
	return out
}

// TestTxnOffsetCommitVerifiesItsPartition: before a transactional offset
// commit is written the transaction coordinator is asked about the group's
// offsets partition; from v5 (Transactions V2, no AddOffsetsToTxn) it adds
// the partition, so the transaction's marker reaches the offsets. Refusals
// answer Kafka's codes and write nothing.
func TestTxnOffsetCommitVerifiesItsPartition(t *testing.T) {
	log := runtimetest.NewMemLog()
	c := startCoordinator(t, log, testGroupConfig())
	v := &offsetsVerifier{}
	c.verifier = v
	ctx := context.Background()
	waitLoaded(t, c.GroupCoordinator, "g")
	offsetsTP := kafka.TopicPartition{Topic: OffsetsTopic, Partition: c.PartitionFor("g")}
	commit := func(version int16, offset int64) int16 {
		t.Helper()
		res := c.CommitTransactionalOffsets(ctx, group.TxnCommitRequest{GroupID: "g", TransactionalID: "app", Version: version,
			ProducerID: 7, ProducerEpoch: 1, GenerationID: -1,
			Partitions: []group.CommitPartition{{TP: kafka.TopicPartition{Topic: "t"}, Offset: offset, LeaderEpoch: -1}}})
		return res.Errors[0]
	}
	for _, version := range []int16{3, 5} {
		if code := commit(version, 10); code != 0 {
			t.Fatalf("v%d commit: %v", version, kerr.ErrorForCode(code))
		}
		v.mu.Lock()
		last := v.calls[len(v.calls)-1]
		v.mu.Unlock()
		if last.TransactionalID != "app" || last.ProducerID != 7 || last.ProducerEpoch != 1 ||
			len(last.Partitions) != 1 || last.Partitions[0] != offsetsTP || last.AddPartitions != (version >= 5) {
			t.Fatalf("v%d verification %+v, want %s of app's producer 7/1 (add: %v)", version, last, offsetsTP, version >= 5)
		}
	}
	written := lastBatch(t, log, offsetsTP.Partition)
	cases := []struct {
		answer  int16
		version int16
		want    int16
	}{
		{kerr.ProducerFenced.Code, 5, kerr.InvalidProducerEpoch.Code},
		{kerr.TransactionAbortable.Code, 3, kerr.InvalidTxnState.Code},
		{kerr.TransactionAbortable.Code, 4, kerr.TransactionAbortable.Code},
		{kerr.NetworkException.Code, 5, kerr.CoordinatorLoadInProgress.Code},
		{kerr.ConcurrentTransactions.Code, 5, kerr.ConcurrentTransactions.Code},
		{kerr.InvalidTxnState.Code, 3, kerr.InvalidTxnState.Code},
	}
	for _, tc := range cases {
		v.mu.Lock()
		v.code = tc.answer
		v.mu.Unlock()
		if code := commit(tc.version, 20); code != tc.want {
			t.Fatalf("v%d answered %v: commit got %v, want %v", tc.version, kerr.ErrorForCode(tc.answer),
				kerr.ErrorForCode(code), kerr.ErrorForCode(tc.want))
		}
		if h := lastBatch(t, log, offsetsTP.Partition); h != written {
			t.Fatalf("a refused commit was written: %+v", h)
		}
	}
}
