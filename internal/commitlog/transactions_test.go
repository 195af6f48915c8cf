package commitlog

import (
	"errors"
	"reflect"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

func txnBatchEpoch(t *testing.T, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	recs := recordstest.N(n, func(int) recordstest.Record {
		return recordstest.Record{Timestamp: testStart.UnixMilli(), Key: []byte("k"), Value: []byte("v")}
	})
	return recordstest.Batch(t, recs, recordstest.Producer(pid, epoch, seq), recordstest.Transactional())
}

// TestAppendVerified: with verification on, a producer's first
// transactional batch needs the guard its verification began with; a
// marker written meanwhile makes that guard stale; once the transaction is
// ongoing no guard is needed.
func TestAppendVerified(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	defer l.Close()

	if _, err := l.AppendVerified(txnBatch(t, 7, 0, 1), 0, 0); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("unverified transactional batch: %v, want INVALID_TXN_STATE", err)
	}
	if _, err := l.AppendVerified(makeBatch(batchSpec{records: 1, valueSize: 3}), 0, 0); err != nil {
		t.Fatalf("plain batch with verification on: %v", err)
	}
	g := mustGuard(t, l, 7, 0, 0)
	if g == 0 {
		t.Fatal("no guard for a producer without a transaction")
	}
	if _, err := l.AppendVerified(txnBatch(t, 7, 0, 1), 0, g); err != nil {
		t.Fatalf("verified batch: %v", err)
	}
	if mustGuard(t, l, 7, 1, 0) != 0 {
		t.Fatal("a guard for an ongoing transaction")
	}
	if _, err := l.AppendVerified(txnBatch(t, 7, 1, 1), 0, 0); err != nil {
		t.Fatalf("batch of the ongoing transaction: %v", err)
	}

	// ABA: the coordinator answered "in the transaction", but an abort
	// was written before the batch: the guard no longer matches.
	g2 := mustGuard(t, l, 8, 0, 0)
	if _, err := l.AppendTxnMarker(TxnMarker{ProducerID: 8, ProducerEpoch: 0, Commit: false, CoordinatorEpoch: 1}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendVerified(txnBatch(t, 8, 0, 1), 0, g2); !errors.Is(err, kerr.InvalidTxnState) {
		t.Fatalf("batch with a guard spent by a marker: %v, want INVALID_TXN_STATE", err)
	}
}

// TestAppendTxnMarker: markers check the producer epoch and the coordinator
// epoch, end the transaction (the last stable offset moves once the high
// watermark passes the marker), and an abort lands in the transaction index.
func TestAppendTxnMarker(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	defer l.Close()

	mustAppend(t, l, txnBatchEpoch(t, 7, 2, 0, 2)) // 0-1
	l.SetHighWatermark(l.LogEndOffset())
	if lso := l.LastStableOffset(l.LogEndOffset()); lso != 0 {
		t.Fatalf("LSO with the transaction open: %d", lso)
	}
	if _, err := l.AppendTxnMarker(TxnMarker{ProducerID: 7, ProducerEpoch: 1, Commit: true, CoordinatorEpoch: 5}, 0); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("marker of a stale producer epoch: %v", err)
	}
	info, err := l.AppendTxnMarker(TxnMarker{ProducerID: 7, ProducerEpoch: 2, Commit: false, CoordinatorEpoch: 5}, 3)
	if err != nil || info.FirstOffset != 2 {
		t.Fatalf("abort marker: %+v %v", info, err)
	}
	if lso := l.LastStableOffset(2); lso != 0 {
		t.Fatalf("LSO before the marker is replicated: %d", lso)
	}
	l.SetHighWatermark(l.LogEndOffset())
	if lso := l.LastStableOffset(3); lso != 3 {
		t.Fatalf("LSO after the replicated marker: %d, want 3", lso)
	}
	want := []AbortedTxn{{ProducerID: 7, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}}
	if got, err := l.CollectAbortedTxns(0, 3); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("aborted %+v %v, want %+v", got, err, want)
	}
	e, _ := l.ProducerEntry(7)
	if e.CoordinatorEpoch != 5 || e.CurrentTxnFirstOffset != -1 {
		t.Fatalf("producer after the marker: %v", &e)
	}

	// A coordinator older than the one that wrote the last marker is fenced.
	mustAppend(t, l, txnBatchEpoch(t, 7, 2, 2, 1)) // 3
	if _, err := l.AppendTxnMarker(TxnMarker{ProducerID: 7, ProducerEpoch: 2, Commit: true, CoordinatorEpoch: 4}, 3); !errors.Is(err, kerr.TransactionCoordinatorFenced) {
		t.Fatalf("marker of a stale coordinator: %v, want TRANSACTION_COORDINATOR_FENCED", err)
	}
	// Transactions v2: the marker carries the bumped epoch; the same epoch
	// for an open transaction is fenced.
	if _, err := l.AppendTxnMarker(TxnMarker{ProducerID: 7, ProducerEpoch: 2, Commit: true, CoordinatorEpoch: 5, TxnVersion: 2}, 3); !errors.Is(err, kerr.InvalidProducerEpoch) {
		t.Fatalf("TV2 marker without a bumped epoch: %v", err)
	}
	info, err = l.AppendTxnMarker(TxnMarker{ProducerID: 7, ProducerEpoch: 3, Commit: true, CoordinatorEpoch: 5, TxnVersion: 2}, 3)
	if err != nil {
		t.Fatal(err)
	}
	res, err := l.Read(info.FirstOffset, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := res.Bytes()
	h, err := records.ParseHeader(b)
	if err != nil || !h.IsControl() || !h.IsTransactional() || h.ProducerEpoch != 3 || h.PartitionLeaderEpoch != 3 {
		t.Fatalf("marker batch %+v %v", h, err)
	}
	mk, ok, err := decodeMarker(b)
	if err != nil || !ok || !mk.Commit || mk.CoordinatorEpoch != 5 {
		t.Fatalf("marker record %+v %v %v", mk, ok, err)
	}
	got := l.ActiveProducers()
	if len(got) != 1 || got[0].ProducerID != 7 || got[0].ProducerEpoch != 3 || got[0].CurrentTxnFirstOffset != -1 {
		t.Fatalf("active producers %v", got)
	}
}

// TestFollowerKeepsTransactions: a follower appending the leader's batches
// (markers included) has the leader's last stable offset and aborted
// transactions, so it can lead.
func TestFollowerKeepsTransactions(t *testing.T) {
	env := newMemEnv(t)
	leader := env.open(testOptions(), StartState{})
	defer leader.Close()
	mustAppend(t, leader, txnBatchEpoch(t, 7, 0, 0, 2))                   // 0-1
	mustAppend(t, leader, txnBatchEpoch(t, 8, 0, 0, 1))                   // 2
	mustAppend(t, leader, makeBatch(batchSpec{records: 1, valueSize: 3})) // 3
	if _, err := leader.AppendTxnMarker(TxnMarker{ProducerID: 7, Commit: false, CoordinatorEpoch: 1}, 0); err != nil {
		t.Fatal(err)
	}
	res, err := leader.Read(0, 1<<20, leader.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := res.Bytes()

	fenv := newMemEnv(t)
	fenv.dir = "/data/t-0-follower"
	follower := fenv.open(testOptions(), StartState{})
	defer follower.Close()
	if _, err := follower.AppendAsFollower(data); err != nil {
		t.Fatal(err)
	}
	for _, l := range []*Log{leader, follower} {
		l.SetHighWatermark(l.LogEndOffset())
	}
	if a, b := leader.LastStableOffset(5), follower.LastStableOffset(5); a != 2 || b != 2 {
		t.Fatalf("LSO leader %d follower %d, want 2 (producer 8 open)", a, b)
	}
	la, _ := leader.CollectAbortedTxns(0, 5)
	fa, _ := follower.CollectAbortedTxns(0, 5)
	if len(la) != 1 || !reflect.DeepEqual(la, fa) {
		t.Fatalf("aborted: leader %+v follower %+v", la, fa)
	}
}

func mustAppend(t *testing.T, l *Log, b []byte) AppendInfo {
	t.Helper()
	info, err := l.Append(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func mustGuard(t *testing.T, l *Log, pid int64, seq int32, epoch int16) VerificationGuard {
	t.Helper()
	g, err := l.MaybeStartTransactionVerification(pid, seq, epoch, false)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
