package replication

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testutil"
)

// fakeVerifier answers verifications with code (a partition missing from
// codes is verified), recording each request.
type fakeVerifier struct {
	mu    sync.Mutex
	codes map[kafka.TopicPartition]int16
	omit  bool // answer nothing at all
	calls []VerifyRequest
}

func (v *fakeVerifier) VerifyTransaction(_ context.Context, req VerifyRequest) map[kafka.TopicPartition]int16 {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls = append(v.calls, req)
	out := map[kafka.TopicPartition]int16{}
	if v.omit {
		return out
	}
	for _, tp := range req.Partitions {
		out[tp] = v.codes[tp]
	}
	return out
}

func (v *fakeVerifier) answer(tp kafka.TopicPartition, code int16) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.codes == nil {
		v.codes = map[kafka.TopicPartition]int16{}
	}
	v.codes[tp] = code
}

func (v *fakeVerifier) takeCalls() []VerifyRequest {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.calls
	v.calls = nil
	return out
}

func txnRecords(t *testing.T, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	return recordstest.Batch(t, recordstest.N(n, func(i int) recordstest.Record {
		return recordstest.Record{Timestamp: testStart.UnixMilli(), Key: []byte{byte(i)}, Value: []byte("txn")}
	}), recordstest.Producer(pid, epoch, seq), recordstest.Transactional())
}

func produceTxn(t *testing.T, f *fixture, version int16, parts ...AppendPartition) []PartitionAppendResult {
	t.Helper()
	return f.rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: -1, Timeout: 5 * time.Second,
		ProduceVersion: version, TransactionalID: "tx", Partitions: parts})
}

func marker(pid int64, epoch int16, commit bool, coordinatorEpoch int32, tps ...kafka.TopicPartition) TxnMarker {
	return TxnMarker{ProducerID: pid, ProducerEpoch: epoch, Commit: commit, CoordinatorEpoch: coordinatorEpoch, Partitions: tps}
}

func mustMarkers(t *testing.T, f *fixture, markers ...TxnMarker) [][]TxnMarkerResult {
	t.Helper()
	out := f.rm.AppendTxnMarkers(t.Context(), 5*time.Second, markers)
	for _, rs := range out {
		for _, r := range rs {
			wantCode(t, "marker on "+r.TP.String(), r.Err, nil)
		}
	}
	return out
}

// TestTransactionalProduceIsVerified: the first transactional batch of a
// producer on a partition is verified with the coordinator (once for all
// partitions of the request), later ones of the same transaction are not,
// and after the marker the next transaction is verified again.
func TestTransactionalProduceIsVerified(t *testing.T) {
	v := &fakeVerifier{}
	f := newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
	res := produceTxn(t, f, 11,
		AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 1, 0, 2)},
		AppendPartition{TP: tp("t", 1), Records: txnRecords(t, 7, 1, 0, 1)},
		AppendPartition{TP: tp("c", 0), Records: batch(t, 1, testStart.UnixMilli())})
	for _, r := range res {
		wantCode(t, "verified produce to "+r.TP.String(), r.Err, nil)
	}
	calls := v.takeCalls()
	want := VerifyRequest{TransactionalID: "tx", ProducerID: 7, ProducerEpoch: 1, Partitions: []kafka.TopicPartition{tp("t", 0), tp("t", 1)}}
	if len(calls) != 1 || !slices.Equal(calls[0].Partitions, want.Partitions) || calls[0].TransactionalID != "tx" ||
		calls[0].ProducerID != 7 || calls[0].ProducerEpoch != 1 || calls[0].AddPartitions {
		t.Fatalf("verifications %+v, want one %+v", calls, want)
	}
	res = produceTxn(t, f, 11, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 1, 2, 1)})
	wantCode(t, "second batch of the transaction", res[0].Err, nil)
	if calls := v.takeCalls(); len(calls) != 0 {
		t.Fatalf("an ongoing transaction was verified again: %+v", calls)
	}
	mustMarkers(t, f, marker(7, 1, true, 0, tp("t", 0)))
	// TV2 (Produce v12+): the next transaction is added implicitly.
	res = produceTxn(t, f, 12, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 1, 3, 1)})
	wantCode(t, "next transaction", res[0].Err, nil)
	if calls := v.takeCalls(); len(calls) != 1 || !calls[0].AddPartitions {
		t.Fatalf("next transaction's verification %+v, want one with AddPartitions", calls)
	}
}

// TestVerificationErrors: the coordinator's answers reach the producer as
// Kafka maps them, and nothing is appended.
func TestVerificationErrors(t *testing.T) {
	cases := []struct {
		name    string
		code    int16
		version int16
		want    *kerr.Error
		message string
	}{
		{"not in the transaction", kerr.InvalidTxnState.Code, 11, kerr.InvalidTxnState, "Partition was not added to the transaction"},
		{"fenced producer", kerr.ProducerFenced.Code, 11, kerr.InvalidProducerEpoch, ""},
		{"abortable, old client", kerr.TransactionAbortable.Code, 10, kerr.InvalidTxnState, "Partition was not added to the transaction"},
		{"abortable", kerr.TransactionAbortable.Code, 11, kerr.TransactionAbortable, ""},
		{"concurrent transactions", kerr.ConcurrentTransactions.Code, 11, kerr.NotEnoughReplicas,
			"Unable to verify the partition has been added to the transaction. Underlying error: CONCURRENT_TRANSACTIONS"},
		{"coordinator moved", kerr.NotCoordinator.Code, 9, kerr.NotEnoughReplicas,
			"Unable to verify the partition has been added to the transaction. Underlying error: NOT_COORDINATOR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := &fakeVerifier{}
			v.answer(tp("t", 0), c.code)
			f := newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
			res := produceTxn(t, f, c.version, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 1)})
			wantCode(t, c.name, res[0].Err, c.want)
			if res[0].ErrorMessage != c.message || res[0].FirstOffset != -1 {
				t.Fatalf("message %q offset %d, want %q and -1", res[0].ErrorMessage, res[0].FirstOffset, c.message)
			}
			if st := mustPartition(t, f, tp("t", 0)).State(); st.LogEndOffset != 0 {
				t.Fatalf("a refused batch was appended: log end offset %d", st.LogEndOffset)
			}
		})
	}
	t.Run("no answer", func(t *testing.T) {
		v := &fakeVerifier{omit: true}
		f := newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
		res := produceTxn(t, f, 11, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 1)})
		wantCode(t, "partition left out of the answer", res[0].Err, kerr.NotEnoughReplicas)
	})
	t.Run("no transactional id", func(t *testing.T) {
		v := &fakeVerifier{}
		f := newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
		res := f.rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: 1, ProduceVersion: 11,
			Partitions: []AppendPartition{{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 1)}}})
		wantCode(t, "transactional batch without a transactional id", res[0].Err, kerr.InvalidTxnState)
		if len(v.takeCalls()) != 0 {
			t.Fatal("verified a request without a transactional id")
		}
	})
	t.Run("two producers", func(t *testing.T) {
		v := &fakeVerifier{}
		f := newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
		res := produceTxn(t, f, 11,
			AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 1)},
			AppendPartition{TP: tp("t", 1), Records: txnRecords(t, 8, 0, 0, 1)},
			AppendPartition{TP: tp("c", 0), Records: batch(t, 1, testStart.UnixMilli())})
		for _, r := range res {
			wantCode(t, "request naming two transactional producers", r.Err, kerr.InvalidProducerIDMapping)
		}
		if len(v.takeCalls()) != 0 {
			t.Fatal("verified a request naming two producers")
		}
	})
	t.Run("follower", func(t *testing.T) {
		v := &fakeVerifier{}
		f := newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
		followerOf2(t, mustPartition(t, f, tp("t", 0)), 6)
		res := produceTxn(t, f, 11, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 1)})
		wantCode(t, "transactional produce to a follower", res[0].Err, kerr.NotLeaderForPartition)
		if len(v.takeCalls()) != 0 {
			t.Fatal("a follower asked the coordinator")
		}
	})
}

// TestTransactionsWithoutVerifierOrFromCoordinator: with no verifier (as
// Kafka with verification disabled) and for coordinators' writes,
// transactional batches are appended unchecked; the coordinator's are not
// sequence checked.
func TestTransactionsWithoutVerifierOrFromCoordinator(t *testing.T) {
	f := newFixture(t, nil)
	res := produceTxn(t, f, 11, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 1)})
	wantCode(t, "transactional produce without a verifier", res[0].Err, nil)

	v := &fakeVerifier{}
	v.answer(tp("t", 0), kerr.InvalidTxnState.Code)
	f = newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
	for i := range 2 {
		res = f.rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: -1, Timeout: 5 * time.Second, ProduceVersion: 9,
			Origin: AppendOriginCoordinator, Partitions: []AppendPartition{{TP: tp("t", 0), Records: txnRecords(t, 9, 2, 0, 1)}}})
		wantCode(t, "coordinator's transactional write (sequence 0 each time)", res[0].Err, nil)
		if res[0].FirstOffset != int64(i) {
			t.Fatalf("coordinator write %d at offset %d", i, res[0].FirstOffset)
		}
	}
	if len(v.takeCalls()) != 0 {
		t.Fatal("a coordinator's write was verified")
	}
	res = f.rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: 1, ProduceVersion: 9, Origin: AppendOriginCoordinator,
		Partitions: []AppendPartition{{TP: tp("t", 0), Records: txnRecords(t, 9, 1, 0, 1)}}})
	wantCode(t, "coordinator's write with a stale epoch", res[0].Err, kerr.InvalidProducerEpoch)
}

// TestTxnMarkers: markers end transactions (the last stable offset moves
// once replicated), are fenced by the coordinator epoch, and answer Kafka's
// errors for partitions this broker cannot write.
func TestTxnMarkers(t *testing.T) {
	f := newFixture(t, nil)
	produceTxn(t, f, 11, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 3)})
	p := mustPartition(t, f, tp("t", 0))
	if st := p.State(); st.HighWatermark != 3 || st.LastStableOffset != 0 {
		t.Fatalf("open transaction: %+v, want high watermark 3 and LSO 0", st)
	}
	out := mustMarkers(t, f, marker(7, 0, false, 4, tp("t", 0)))
	if out[0][0].Offset != 3 {
		t.Fatalf("marker offset %d, want 3", out[0][0].Offset)
	}
	if st := p.State(); st.LastStableOffset != 4 {
		t.Fatalf("LSO after the abort: %d, want 4", st.LastStableOffset)
	}
	followerOf2(t, mustPartition(t, f, tp("t", 1)), 6)
	produceTxn(t, f, 11, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 3, 1)})
	out = f.rm.AppendTxnMarkers(t.Context(), time.Second, []TxnMarker{
		marker(7, 0, true, 3, tp("t", 0)),
		marker(7, 0, true, 4, tp("t", 1), tp("nope", 0), tp("t", 9)),
	})
	wantCode(t, "stale coordinator epoch", out[0][0].Err, kerr.TransactionCoordinatorFenced)
	wantCode(t, "follower", out[1][0].Err, kerr.NotLeaderForPartition)
	wantCode(t, "unknown topic", out[1][1].Err, kerr.UnknownTopicOrPartition)
	wantCode(t, "unknown partition", out[1][2].Err, kerr.UnknownTopicOrPartition)
	if st := p.State(); st.LastStableOffset != 4 || st.LogEndOffset != 5 {
		t.Fatalf("after refused markers: %+v", st)
	}
	mustMarkers(t, f, marker(7, 0, true, 4, tp("t", 0)))
	if st := p.State(); st.LastStableOffset != 6 {
		t.Fatalf("LSO after the commit: %d, want 6", st.LastStableOffset)
	}
	got, err := f.rm.ActiveProducers(tp("t", 0))
	want := []ProducerState{{ProducerID: 7, ProducerEpoch: 0, LastSequence: 3, LastTimestamp: f.clk.Now().UnixMilli(),
		CoordinatorEpoch: 4, CurrentTxnStartOffset: -1}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("active producers %+v %v, want %+v", got, err, want)
	}
	if _, err := f.rm.ActiveProducers(tp("nope", 0)); ErrorCode(err) != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("active producers of an unknown topic: %v", err)
	}
}

// TestTxnMarkerWaitsForReplication: a marker is answered once the high
// watermark passes it (acks=all), or REQUEST_TIMED_OUT.
func TestTxnMarkerWaitsForReplication(t *testing.T) {
	f := newFixture(t, nil)
	p := mustPartition(t, f, tp("t", 0))
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 6}); err != nil {
		t.Fatal(err)
	}
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 2)})
	done := make(chan [][]TxnMarkerResult, 1)
	go func() {
		done <- f.rm.AppendTxnMarkers(context.Background(), 30*time.Second, []TxnMarker{marker(7, 0, true, 1, tp("t", 0))})
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return f.rm.produceWaits.Waiting() == 1 }, "marker waiting for the follower")
	select {
	case out := <-done:
		t.Fatalf("marker answered before replication: %+v", out)
	default:
	}
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: 2, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), FetchOffset: 3, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	wantCode(t, "follower fetch", out[0].Err, nil)
	select {
	case res := <-done:
		wantCode(t, "replicated marker", res[0][0].Err, nil)
	case <-time.After(10 * time.Second):
		t.Fatal("the follower's fetch did not complete the marker")
	}
	if st := p.State(); st.LastStableOffset != 3 {
		t.Fatalf("LSO %d, want 3", st.LastStableOffset)
	}

	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 2, 1)})
	go func() {
		done <- f.rm.AppendTxnMarkers(context.Background(), 20*time.Millisecond, []TxnMarker{marker(7, 0, true, 1, tp("t", 0))})
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return f.rm.produceWaits.Waiting() == 1 }, "second marker parked")
	f.clk.Advance(20 * time.Millisecond)
	res := <-done
	wantCode(t, "marker the follower never fetched", res[0][0].Err, kerr.RequestTimedOut)
}

// TestReadCommitted: a read_committed fetch stops at the last stable offset
// and lists the aborted transactions of what it returns; ListOffsets
// LATEST answers the LSO for read_committed.
func TestReadCommitted(t *testing.T) {
	f := newFixture(t, nil)
	ts := testStart.UnixMilli()
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 2, ts)})           // 0-1
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 2)}) // 2-3
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 8, 0, 0, 1)}) // 4
	mustMarkers(t, f, marker(7, 0, false, 1, tp("t", 0)))                                // 5
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 1, ts)})           // 6

	read := func(iso Isolation, from int64) FetchPartitionResult {
		t.Helper()
		out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20, Isolation: iso},
			[]FetchPartition{{TP: tp("t", 0), FetchOffset: from, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
		wantCode(t, "fetch", out[0].Err, nil)
		return out[0]
	}
	rc := read(IsolationCommitted, 0)
	wantAborted := []commitlog.AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 5, LastStableOffset: 4}}
	if rc.LastStableOffset != 4 || rc.Records.EndOffset != 4 || !slices.Equal(rc.AbortedTransactions, wantAborted) {
		t.Fatalf("read_committed: LSO %d, records to %d, aborted %+v; want 4, 4, %+v", rc.LastStableOffset, rc.Records.EndOffset, rc.AbortedTransactions, wantAborted)
	}
	if rc := read(IsolationCommitted, 4); rc.Records.Size != 0 || rc.AbortedTransactions != nil {
		t.Fatalf("read_committed at the LSO: %d bytes, aborted %+v", rc.Records.Size, rc.AbortedTransactions)
	}
	if ru := read(IsolationHighWatermark, 0); ru.Records.EndOffset != 7 || ru.AbortedTransactions != nil {
		t.Fatalf("read_uncommitted: to %d, aborted %+v", ru.Records.EndOffset, ru.AbortedTransactions)
	}
	for _, c := range []struct {
		iso  Isolation
		want int64
	}{{IsolationCommitted, 4}, {IsolationHighWatermark, 7}} {
		ans, err := f.rm.ListOffset(tp("t", 0), kafka.ListOffsetsLatest, c.iso, -1, true)
		if err != nil || ans.Offset != c.want {
			t.Fatalf("ListOffsets LATEST isolation %d: %+v %v, want %d", c.iso, ans, err, c.want)
		}
	}
	mustMarkers(t, f, marker(8, 0, true, 1, tp("t", 0))) // 7
	if rc := read(IsolationCommitted, 3); rc.Records.EndOffset != 8 || !slices.Equal(rc.AbortedTransactions, wantAborted) {
		t.Fatalf("read_committed after the commit: to %d, aborted %+v", rc.Records.EndOffset, rc.AbortedTransactions)
	}
	if rc := read(IsolationCommitted, 6); len(rc.AbortedTransactions) != 0 {
		t.Fatalf("aborted transactions before the range: %+v", rc.AbortedTransactions)
	}
}

// TestFollowerKeepsLastStableOffset: a follower replays the leader's
// transactional batches and markers, so its last stable offset and aborted
// transactions are the leader's, and stay right once it leads.
func TestFollowerKeepsLastStableOffset(t *testing.T) {
	leader := newFixture(t, nil)
	leader.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 2)}) // 0-1
	leader.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 8, 0, 0, 1)}) // 2
	mustMarkers(t, leader, marker(7, 0, false, 1, tp("t", 0)))                                // 3
	lp := mustPartition(t, leader, tp("t", 0))
	lst := lp.State()
	data, err := lp.Log().Read(0, 1<<20, lst.LogEndOffset, true)
	if err != nil {
		t.Fatal(err)
	}
	bytes, err := data.Bytes()
	if err != nil {
		t.Fatal(err)
	}

	follower := newFixture(t, nil)
	fp := mustPartition(t, follower, tp("t", 0))
	followerOf2(t, fp, 6)
	if err := fp.appendAsFollower(6, bytes, lst.HighWatermark, 0); err != nil {
		t.Fatal(err)
	}
	if st := fp.State(); st.LastStableOffset != lst.LastStableOffset || st.LastStableOffset != 2 {
		t.Fatalf("follower LSO %d, leader %d, want 2", st.LastStableOffset, lst.LastStableOffset)
	}
	entry, ok := fp.Log().ProducerEntry(8)
	if !ok || entry.CurrentTxnFirstOffset != 2 {
		t.Fatalf("follower's producer 8: %+v %v", entry, ok)
	}
	// The follower becomes leader: producer 8's transaction still holds the
	// LSO, its marker moves it, and read_committed lists producer 7's abort.
	if _, err := fp.applyState(metadata.PartitionState{Replicas: []int32{1, 2}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 7}); err != nil {
		t.Fatal(err)
	}
	if st := fp.State(); st.LastStableOffset != 2 {
		t.Fatalf("new leader's LSO %d, want 2", st.LastStableOffset)
	}
	mustMarkers(t, follower, marker(8, 0, true, 1, tp("t", 0))) // 4
	res, err := fp.ReadRecords(ReadOptions{FetchOffset: 0, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1,
		MaxBytes: 1 << 20, MinOneBatch: true, Isolation: IsolationCommitted, RequireLeader: true})
	if err != nil || res.LastStableOffset != 5 || len(res.AbortedTransactions) != 1 || res.AbortedTransactions[0].ProducerID != 7 {
		t.Fatalf("new leader's read_committed: LSO %d, aborted %+v, %v", res.LastStableOffset, res.AbortedTransactions, err)
	}
	got, err := follower.rm.ActiveProducers(tp("t", 0))
	if err != nil || len(got) != 2 || got[0].ProducerID != 7 || got[0].CoordinatorEpoch != 1 || got[1].CurrentTxnStartOffset != -1 {
		t.Fatalf("new leader's producers %+v %v", got, err)
	}
}

func mustPartition(t *testing.T, f *fixture, tp kafka.TopicPartition) *Partition {
	t.Helper()
	p, err := f.rm.Partition(tp)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// followerOf2 makes broker 1 follow broker 2 for p at leaderEpoch.
func followerOf2(t *testing.T, p *Partition, leaderEpoch int32) {
	t.Helper()
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 2, LeaderEpoch: leaderEpoch}); err != nil {
		t.Fatal(err)
	}
}
