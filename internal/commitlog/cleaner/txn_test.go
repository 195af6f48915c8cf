package cleaner

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

func TestAbortedTransactionDataDropsAndDoesNotShadowCommitted(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	l := openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	m := model{}
	committed := kv{key: "a", value: "committed"}
	m.apply(appendRecords(t, l, clk, records.NoCompression, committed), committed)
	txn := []recordstest.Option{recordstest.Producer(9, 0, 0), recordstest.Transactional()}
	now := clk.Now().UnixMilli()
	batch := recordstest.Batch(t, []recordstest.Record{
		{Timestamp: now, Key: []byte("a"), Value: []byte("aborted")},
		{Timestamp: now, Key: []byte("b"), Value: []byte("aborted")},
	}, txn...)
	data, err := l.Append(batch, 0)
	if err != nil {
		t.Fatal(err)
	}
	marker := recordstest.Marker(t, false, 0, clk.Now().UnixMilli(), txn...)
	abort, err := l.AppendAsCoordinator(marker, 0)
	if err != nil {
		t.Fatal(err)
	}
	later := kv{key: "c", value: "after"}
	m.apply(appendRecords(t, l, clk, records.NoCompression, later), later)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	if !cleanOnce(t, c) {
		t.Fatal("not cleaned")
	}
	got, headers := readAll(t, l)
	checkAgainstModel(t, l, m)
	if len(got) != 2 {
		t.Fatalf("records %+v: want the committed a and c only", got)
	}
	var sawEmpty, sawMarker bool
	for _, h := range headers {
		switch {
		case h.IsControl():
			sawMarker = h.BaseOffset == abort.FirstOffset
		case h.ProducerID == 9:
			sawEmpty = h.RecordCount == 0 && h.BaseOffset == data.FirstOffset && h.LastOffsetDelta == 1
		}
	}
	if !sawMarker || !sawEmpty {
		t.Fatalf("batches %+v: want the ABORT marker kept and the aborted batch emptied (producer 9's last)", headers)
	}
	txns, err := l.CollectAbortedTxns(0, l.LogEndOffset())
	if err != nil || len(txns) != 1 || txns[0].ProducerID != 9 {
		t.Fatalf("aborted transactions after cleaning: %+v, %v; want producer 9's", txns, err)
	}
}

// TestMarkersRemovedOnceTheirTransactionIsGone follows Kafka's rules for
// transaction markers: a marker stays while a batch of its transaction is
// left before it; the clean that finds none gives it a delete horizon
// (delete.retention.ms) and drops its aborted transaction from the index;
// a clean after the horizon removes it, except the marker that carries a
// producer's epoch (no data batch of it left), which stays empty.
func TestMarkersRemovedOnceTheirTransactionIsGone(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	opts := compactOptions()
	l := openLog(t, fs, clk, opts, false)
	defer l.Close()
	m := model{}
	now := clk.Now().UnixMilli()
	appendBatch := func(pid int64, epoch int16, seq int32, txn bool, k, v string) commitlog.AppendInfo {
		t.Helper()
		o := []recordstest.Option{recordstest.Producer(pid, epoch, seq)}
		if txn {
			o = append(o, recordstest.Transactional())
		}
		info, err := l.Append(recordstest.Batch(t, []recordstest.Record{{Timestamp: now, Key: []byte(k), Value: []byte(v)}}, o...), 0)
		if err != nil {
			t.Fatal(err)
		}
		if !txn || pid != 9 {
			m.apply([]int64{info.FirstOffset}, kv{key: k, value: v})
		}
		return info
	}
	appendMarker := func(pid int64, epoch int16, commit bool, tv int16) int64 {
		t.Helper()
		info, err := l.AppendTxnMarker(commitlog.TxnMarker{ProducerID: pid, ProducerEpoch: epoch, Commit: commit, CoordinatorEpoch: 1, TxnVersion: tv}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return info.FirstOffset
	}
	plain := func(k, v string) {
		t.Helper()
		m.apply(appendRecords(t, l, clk, records.NoCompression, kv{key: k, value: v}), kv{key: k, value: v})
	}
	// Producer 9 aborts; 10 commits a value overwritten later; 11 commits
	// under Transactions V2 (its marker bumps the epoch, so 11 keeps no
	// data batch in its state) a value overwritten later.
	appendBatch(9, 0, 0, true, "a", "aborted")
	abort9 := appendMarker(9, 0, false, 0)
	appendBatch(9, 0, 1, false, "z9", "last of 9")
	appendBatch(10, 0, 0, true, "k", "committed")
	commit10 := appendMarker(10, 0, true, 0)
	appendBatch(10, 0, 1, false, "z10", "last of 10")
	appendBatch(11, 0, 0, true, "n", "committed")
	commit11 := appendMarker(11, 1, true, 2)
	plain("k", "newer")
	plain("n", "newer")

	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	clean := func(what string) map[int64]records.Header {
		t.Helper()
		plain("dirty", what)
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
		l.SetHighWatermark(l.LogEndOffset())
		if !cleanOnce(t, c) {
			t.Fatalf("%s: not cleaned", what)
		}
		checkAgainstModel(t, l, m)
		_, headers := readAll(t, l)
		markers := map[int64]records.Header{}
		for _, h := range headers {
			if h.IsControl() {
				markers[h.BaseOffset] = h
			}
		}
		return markers
	}
	aborted := func() []commitlog.AbortedTxn {
		t.Helper()
		txns, err := l.CollectAbortedTxns(0, l.LogEndOffset())
		if err != nil {
			t.Fatal(err)
		}
		return txns
	}

	// First clean: every transaction's data is read (then dropped), so
	// every marker stays as it was, and so does the aborted entry.
	markers := clean("first")
	for _, off := range []int64{abort9, commit10, commit11} {
		if h, ok := markers[off]; !ok || h.HasDeleteHorizon() || h.RecordCount != 1 {
			t.Fatalf("first clean: marker at %d: %+v (present %v)", off, h, ok)
		}
	}
	if got := aborted(); len(got) != 1 || got[0].ProducerID != 9 {
		t.Fatalf("first clean: aborted %+v", got)
	}

	// Second clean: no data is left before the markers: each gets a delete
	// horizon, and the abort leaves the transaction index.
	markers = clean("second")
	horizon := clk.Now().UnixMilli() + opts.DeleteRetention.Milliseconds()
	for _, off := range []int64{abort9, commit10, commit11} {
		if h, ok := markers[off]; !ok || !h.HasDeleteHorizon() || h.BaseTimestamp != horizon || h.RecordCount != 1 {
			t.Fatalf("second clean: marker at %d: %+v (present %v), want horizon %d", off, h, ok, horizon)
		}
	}
	if got := aborted(); len(got) != 0 {
		t.Fatalf("second clean: aborted %+v, want none", got)
	}

	// Before the horizon nothing more goes; after it the markers go but
	// producer 11's, which carries its epoch and stays empty.
	clk.Advance(opts.DeleteRetention - time.Second)
	if markers = clean("third"); len(markers) != 3 {
		t.Fatalf("third clean, before the horizon: markers %+v", markers)
	}
	clk.Advance(time.Second)
	markers = clean("fourth")
	if h, ok := markers[commit11]; len(markers) != 1 || !ok || h.RecordCount != 0 || h.ProducerEpoch != 1 {
		t.Fatalf("after the horizon: markers %+v, want producer 11's alone, empty", markers)
	}
	// The producers' state is as it was: a restart replays what is left.
	for pid, epoch := range map[int64]int16{9: 0, 10: 0, 11: 1} {
		if e, ok := l.ProducerEntry(pid); !ok || e.ProducerEpoch != epoch || e.CurrentTxnFirstOffset != -1 {
			t.Fatalf("producer %d after cleaning: %+v %v", pid, e, ok)
		}
	}
}
