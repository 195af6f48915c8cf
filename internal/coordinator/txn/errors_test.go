package txn

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestWriteErrorCode(t *testing.T) {
	cases := []struct {
		err  error
		want int16
	}{
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotEnoughReplicasAfterAppend, kerr.CoordinatorNotAvailable.Code},
		{kerr.RequestTimedOut, kerr.CoordinatorNotAvailable.Code},
		{kerr.UnknownTopicOrPartition, kerr.CoordinatorNotAvailable.Code},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator.Code},
		{kerr.KafkaStorageError, kerr.NotCoordinator.Code},
		{fmt.Errorf("shard stopped: %w", kerr.NotCoordinator), kerr.NotCoordinator.Code},
		{kerr.MessageTooLarge, kerr.UnknownServerError.Code},
		{kerr.RecordListTooLarge, kerr.UnknownServerError.Code},
		{kerr.InvalidRecord, kerr.InvalidRecord.Code},
		{context.Canceled, kerr.CoordinatorNotAvailable.Code},
	}
	for _, c := range cases {
		if got := WriteErrorCode(c.err); got != c.want {
			t.Errorf("WriteErrorCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestErrorForVersion(t *testing.T) {
	fenced, epoch := kerr.ProducerFenced.Code, kerr.InvalidProducerEpoch.Code
	cases := []struct {
		key     kmsg.Key
		version int16
		code    int16
		want    int16
	}{
		{kmsg.InitProducerID, 3, fenced, epoch},
		{kmsg.InitProducerID, 4, fenced, fenced},
		{kmsg.EndTxn, 1, fenced, epoch},
		{kmsg.EndTxn, 2, fenced, fenced},
		{kmsg.AddPartitionsToTxn, 1, fenced, epoch},
		{kmsg.AddPartitionsToTxn, 2, fenced, fenced},
		{kmsg.AddOffsetsToTxn, 0, fenced, epoch},
		{kmsg.AddOffsetsToTxn, 3, fenced, fenced},
		{kmsg.EndTxn, 0, kerr.InvalidTxnState.Code, kerr.InvalidTxnState.Code},
		{kmsg.TxnOffsetCommit, 0, fenced, fenced},
	}
	for _, c := range cases {
		if got := ErrorForVersion(c.key, c.version, c.code); got != c.want {
			t.Errorf("ErrorForVersion(%v v%d, %d) = %d, want %d", c.key, c.version, c.code, got, c.want)
		}
	}
}

func TestVerifyErrorForProducer(t *testing.T) {
	abortable := kerr.TransactionAbortable.Code
	cases := []struct {
		code      int16
		supported bool
		want      int16
	}{
		{abortable, false, kerr.InvalidTxnState.Code},
		{abortable, true, abortable},
		{kerr.ProducerFenced.Code, true, kerr.InvalidProducerEpoch.Code},
		{kerr.ConcurrentTransactions.Code, false, kerr.ConcurrentTransactions.Code},
		{0, false, 0},
	}
	for _, c := range cases {
		if got := VerifyErrorForProducer(c.code, c.supported); got != c.want {
			t.Errorf("VerifyErrorForProducer(%d, %v) = %d, want %d", c.code, c.supported, got, c.want)
		}
	}
	if EndTxnClientVersion(4) != TV0 || EndTxnClientVersion(5) != TV2 {
		t.Error("EndTxnClientVersion: v5 and only v5+ is TV2")
	}
}

func TestStateNames(t *testing.T) {
	for s := Empty; s <= PrepareEpochFence; s++ {
		if got, ok := ParseState(s.String()); !ok || got != s {
			t.Errorf("ParseState(%q) = %v, %v", s.String(), got, ok)
		}
	}
	if _, ok := ParseState("Bogus"); ok || State(9).String() != "Unknown" {
		t.Error("unknown states")
	}
}
