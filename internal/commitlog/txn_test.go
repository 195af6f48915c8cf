package commitlog

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-io/sluice/internal/records/recordstest"
)

func txnBatch(t *testing.T, pid int64, seq int32, n int) []byte {
	t.Helper()
	recs := recordstest.N(n, func(int) recordstest.Record {
		return recordstest.Record{Timestamp: testStart.UnixMilli(), Key: []byte("k"), Value: []byte("v")}
	})
	return recordstest.Batch(t, recs, recordstest.Producer(pid, 0, seq), recordstest.Transactional())
}

func marker(t *testing.T, pid int64, commit bool) []byte {
	t.Helper()
	return recordstest.Marker(t, commit, 1, testStart.UnixMilli(), recordstest.Producer(pid, 0, -1))
}

// TestTransactionIndex appends an aborted and a committed transaction and
// checks the last stable offset, the aborted list a read_committed fetch
// gets, and that both survive a clean restart, a crash and truncation.
func TestTransactionIndex(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	mustAppend := func(b []byte, coordinator bool) AppendInfo {
		t.Helper()
		var info AppendInfo
		var err error
		if coordinator {
			info, err = l.AppendAsCoordinator(b, 0)
		} else {
			info, err = l.Append(b, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	mustAppend(makeBatch(batchSpec{records: 2, valueSize: 5}), false) // 0-1
	mustAppend(txnBatch(t, 7, 0, 3), false)                           // 2-4, producer 7's transaction
	if got := l.LastStableOffset(100); got != 2 {
		t.Fatalf("LSO with an open transaction from 2: %d", got)
	}
	mustAppend(txnBatch(t, 8, 0, 1), false) // 5, producer 8's transaction
	abort := mustAppend(marker(t, 7, false), true)
	if abort.FirstOffset != 6 {
		t.Fatalf("marker at %d", abort.FirstOffset)
	}
	if got := l.LastStableOffset(100); got != 2 {
		t.Fatalf("LSO before the abort marker is replicated: %d", got)
	}
	l.SetHighWatermark(l.LogEndOffset())
	if got := l.LastStableOffset(100); got != 5 {
		t.Fatalf("LSO after the abort, producer 8 still open: %d", got)
	}
	mustAppend(marker(t, 8, true), true) // 7
	l.SetHighWatermark(l.LogEndOffset())
	if got := l.LastStableOffset(100); got != 100 {
		t.Fatalf("LSO with no open transaction: %d, want the high watermark", got)
	}
	want := []AbortedTxn{{ProducerID: 7, FirstOffset: 2, LastOffset: 6, LastStableOffset: 5}}
	check := func(where string) {
		t.Helper()
		got, err := l.CollectAbortedTxns(0, l.LogEndOffset())
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: aborted %+v %v, want %+v", where, got, err, want)
		}
		if got, _ := l.CollectAbortedTxns(7, 8); len(got) != 0 {
			t.Fatalf("%s: aborted transactions outside the range: %+v", where, got)
		}
	}
	check("after append")
	res, err := l.Read(3, 1<<20, l.LogEndOffset(), true)
	if err != nil || res.FirstOffset != 2 || res.EndOffset != 8 {
		t.Fatalf("read: first %d end %d %v", res.FirstOffset, res.EndOffset, err)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	mustAppend(makeBatch(batchSpec{records: 1, valueSize: 5}), false) // 8
	check("after a roll")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = env.open(testOptions(), StartState{CleanShutdown: true})
	check("after a clean restart")
	// The transaction index file is lost in a crash (never synced since
	// the restart rewrote nothing); replay from the recovery point rebuilds it.
	names, _ := env.fs.List("/data/t-0")
	removed := 0
	for _, n := range names {
		if strings.HasSuffix(n, txnIndexSuffix) {
			if err := env.fs.Remove("/data/t-0/" + n); err != nil {
				t.Fatal(err)
			}
			removed++
		}
	}
	if removed != 1 {
		t.Fatalf("%d transaction index files, want 1: %v", removed, names)
	}
	l.Close()
	l = env.open(testOptions(), StartState{RecoveryPoint: 0})
	check("after recovery")
	if err := l.TruncateTo(6); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.CollectAbortedTxns(0, 10); len(got) != 0 {
		t.Fatalf("aborted transaction kept after truncating its marker: %+v", got)
	}
	if got := l.LastStableOffset(100); got != 2 {
		t.Fatalf("LSO after truncating the markers: %d", got)
	}
	var b strings.Builder
	if err := DumpSegment(env.fs, "/data/t-0/00000000000000000002.txnindex", &b); err != nil {
		t.Fatal(err)
	}
	if b.String() != "" {
		t.Fatalf("transaction index after truncation: %q", b.String())
	}
	if err := DumpSegment(env.fs, "/data/t-0/00000000000000000002.log", &b); err != nil || !strings.Contains(b.String(), "producerId: 7") {
		t.Fatalf("dump: %v\n%s", err, b.String())
	}
	l.Close()
}
