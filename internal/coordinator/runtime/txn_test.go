package runtime

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testutil"
)

func rec(k, v string) Record { return Record{Key: []byte(k), Value: []byte(v)} }

// describeBatch is a batch's producer fields and keys, for comparisons.
func describeBatch(t *testing.T, batch []byte) string {
	t.Helper()
	h, err := records.ParseHeader(batch)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	if err := records.ForEachRecord(batch, func(r records.Record) error {
		keys = append(keys, string(r.Key))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("txn=%v producer=%d/%d seq=%d keys=%v", h.IsTransactional(), h.ProducerID, h.ProducerEpoch, h.BaseSequence, keys)
}

// TestBuildBatchKeepsTransactionalWritesAlone: plain writes waiting together
// share a batch, a transactional write goes alone in a batch of its producer
// (sequence 0, as Kafka's coordinator), and neither the plain write before
// it nor the one after joins it.
func TestBuildBatchKeepsTransactionalWritesAlone(t *testing.T) {
	s := &shard[*kvShard]{opts: &Options[*kvShard]{Topic: testTopic, Clock: clock.NewManual(time.Unix(1_700_000_000, 0)), MaxBatchBytes: 1 << 20}}
	txn := &Producer{ID: 7, Epoch: 2}
	writes := []Write{
		{Records: []Record{rec("a", "1")}},
		{Records: []Record{rec("b", "2")}},
		{Records: []Record{rec("c", "3"), rec("d", "4")}, Transaction: txn},
		{Records: []Record{rec("e", "5")}, Transaction: txn},
		{Records: []Record{rec("f", "6")}},
	}
	var got []string
	for len(writes) > 0 {
		n, batch, err := s.buildBatch(writes)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, describeBatch(t, batch))
		writes = writes[n:]
	}
	want := []string{
		"txn=false producer=-1/-1 seq=-1 keys=[a b]",
		"txn=true producer=7/2 seq=0 keys=[c d]",
		"txn=true producer=7/2 seq=0 keys=[e]",
		"txn=false producer=-1/-1 seq=-1 keys=[f]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("batches:\n%v\nwant\n%v", got, want)
	}
}

// TestRuntimeReplaysTransactions: a transactional write goes to the log as
// its producer's batch; a load hands each record with its batch's producer
// and each marker with its result, so committed transactions apply, aborted
// ones do not, and one without a marker stays pending.
func TestRuntimeReplaysTransactions(t *testing.T) {
	ctx := context.Background()
	log := runtimetest.NewMemLog()
	appendBatch := func(b []byte) {
		t.Helper()
		if _, err := log.Append(ctx, 0, b); err != nil {
			t.Fatal(err)
		}
	}
	kv := func(k, v string) recordstest.Record { return recordstest.Record{Key: []byte(k), Value: []byte(v)} }
	appendBatch(recordstest.Batch(t, []recordstest.Record{kv("a", "1")}))                                                             // 0
	appendBatch(recordstest.Batch(t, []recordstest.Record{kv("b", "2")}, recordstest.Producer(7, 0, 0), recordstest.Transactional())) // 1
	appendBatch(recordstest.Batch(t, []recordstest.Record{kv("c", "3")}, recordstest.Producer(8, 0, 0), recordstest.Transactional())) // 2
	appendBatch(recordstest.Marker(t, true, 0, 0, recordstest.Producer(7, 0, -1)))                                                    // 3
	appendBatch(recordstest.Marker(t, false, 0, 0, recordstest.Producer(8, 0, -1)))                                                   // 4

	r, _ := newKVRuntime(t, log)
	r.ApplyImage(kvImage(t, 1, testNode, 0))
	waitServing(t, r, 0)
	// A transactional put through the runtime, then its marker as the
	// broker's marker writer appends it, then one left open.
	err, code := Call(ctx, r, 0, func(_ time.Time, s *kvShard, reply func(error)) {
		s.writes = append(s.writes, Write{Records: []Record{rec("d", "4")}, Transaction: &Producer{ID: 10, Epoch: 3}, Done: reply})
	})
	if err != nil || code != 0 {
		t.Fatalf("transactional put: %v %v", err, kerr.ErrorForCode(code))
	}
	appendBatch(recordstest.Marker(t, true, 0, 0, recordstest.Producer(10, 3, -1)))                                                   // 6
	appendBatch(recordstest.Batch(t, []recordstest.Record{kv("e", "5")}, recordstest.Producer(9, 0, 0), recordstest.Transactional())) // 7

	r.ApplyImage(kvImage(t, 1, testNode, 1)) // reload
	waitServing(t, r, 0)
	type state struct {
		kv       map[string]string
		pending  map[int64]map[string]string
		replayed []string
	}
	st, _ := Call(ctx, r, 0, func(_ time.Time, s *kvShard, reply func(state)) {
		reply(state{s.kv, s.pending, s.replayed})
	})
	if want := map[string]string{"a": "1", "b": "2", "d": "4"}; !maps.Equal(st.kv, want) {
		t.Errorf("committed %v, want %v", st.kv, want)
	}
	if len(st.pending) != 1 || st.pending[9]["e"] != "5" {
		t.Errorf("pending %v, want producer 9's e=5", st.pending)
	}
	want := []string{
		"0 {ProducerID:-1 ProducerEpoch:-1 Transactional:false Control:false Commit:false} a=1",
		"1 {ProducerID:7 ProducerEpoch:0 Transactional:true Control:false Commit:false} b=2",
		"2 {ProducerID:8 ProducerEpoch:0 Transactional:true Control:false Commit:false} c=3",
		"3 {ProducerID:7 ProducerEpoch:0 Transactional:true Control:true Commit:true} =",
		"4 {ProducerID:8 ProducerEpoch:0 Transactional:true Control:true Commit:false} =",
		"5 {ProducerID:10 ProducerEpoch:3 Transactional:true Control:false Commit:false} d=4",
		"6 {ProducerID:10 ProducerEpoch:3 Transactional:true Control:true Commit:true} =",
		"7 {ProducerID:9 ProducerEpoch:0 Transactional:true Control:false Commit:false} e=5",
	}
	if !slices.Equal(st.replayed, want) {
		t.Errorf("replayed:\n%v\nwant\n%v", st.replayed, want)
	}
}

// TestRuntimeCallAfterLoad: while a shard loads, Call answers
// COORDINATOR_LOAD_IN_PROGRESS but CallAfterLoad waits and runs once the
// load is over (it sees what the load replayed); a partition no shard runs
// answers NOT_COORDINATOR.
func TestRuntimeCallAfterLoad(t *testing.T) {
	ctx := context.Background()
	log := runtimetest.NewMemLog()
	if _, err := log.Append(ctx, 0, recordstest.Batch(t, []recordstest.Record{{Key: []byte("a"), Value: []byte("1")}})); err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	r, _ := newKVRuntime(t, gatedLog{log, open})
	r.ApplyImage(kvImage(t, 1, testNode, 0))
	type answer struct {
		v    string
		code int16
	}
	after := make(chan answer, 1)
	go func() {
		v, code := CallAfterLoad(ctx, r, 0, func(_ time.Time, s *kvShard, reply func(string)) { reply(s.kv["a"]) })
		after <- answer{v, code}
	}()
	if _, code := get(ctx, r, 0, "a"); code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("Call while loading: %v", kerr.ErrorForCode(code))
	}
	sh, _ := r.shard(0)
	testutil.Eventually(t, 5*time.Second, func() bool {
		sh.events.mu.Lock()
		defer sh.events.mu.Unlock()
		return len(sh.events.items) == 1
	}, "CallAfterLoad queued while the shard loads")
	close(open)
	if a := <-after; a.code != 0 || a.v != "1" {
		t.Fatalf("CallAfterLoad: %q %v, want the replayed a=1", a.v, kerr.ErrorForCode(a.code))
	}
	if _, code := CallAfterLoad(ctx, r, 1, func(_ time.Time, _ *kvShard, reply func(string)) { reply("") }); code != kerr.NotCoordinator.Code {
		t.Fatalf("CallAfterLoad on a partition not run: %v", kerr.ErrorForCode(code))
	}
}
