package commitlog

import (
	"errors"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

func newTestManager(t *testing.T, fsys vfs.FS, clk clock.Clock, dirs ...string) *Manager {
	t.Helper()
	o := DefaultManagerOptions(dirs...)
	o.Defaults = testOptions()
	o.TailFlushMinBytes = 0 // the tests' logs are small: every tick flushes them
	m, err := NewManager(fsys, o, clk, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("new manager: %v", err)
	}
	return m
}

func TestManagerCleanRestartAndCrash(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a", "/data/b")
	id := kafka.UUID{1, 2, 3}
	tps := []kafka.TopicPartition{{Topic: "x", Partition: 0}, {Topic: "x", Partition: 1}, {Topic: "y-z", Partition: 0}}
	for _, tp := range tps {
		l, err := m.GetOrCreate(tp, id, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := m.GetOrCreate(tps[0], kafka.UUID{9}, testOptions()); err == nil {
		t.Fatal("a different topic id for an existing log was accepted")
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	fsys.Crash() // everything was made durable by the clean close
	m = newTestManager(t, fsys, clk, "/data/a", "/data/b")
	if got := len(m.Logs()); got != 3 {
		t.Fatalf("%d logs after restart", got)
	}
	for _, d := range []string{"/data/a", "/data/b"} {
		if _, err := fsys.Stat(d + "/" + CleanShutdownFile); !vfs.IsNotExist(err) {
			t.Fatalf("clean shutdown marker in %s not removed at start-up: %v", d, err)
		}
	}
	for _, tp := range tps {
		l, _ := m.Get(tp)
		if l.LogEndOffset() != 20 {
			t.Fatalf("%s: LEO %d after clean restart", tp, l.LogEndOffset())
		}
		if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0); err != nil {
			t.Fatal(err)
		}
	}
	// Flush one log and checkpoint, then crash: the flushed data survives.
	l0, _ := m.Get(tps[0])
	if err := l0.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckpointRecoveryPoints(); err != nil {
		t.Fatal(err)
	}
	fsys.Crash()
	m = newTestManager(t, fsys, clk, "/data/a", "/data/b")
	defer m.Close()
	l0, _ = m.Get(tps[0])
	if l0.LogEndOffset() != 22 {
		t.Fatalf("flushed log has LEO %d after crash, want 22", l0.LogEndOffset())
	}
	for _, tp := range tps[1:] {
		l, _ := m.Get(tp)
		if l.LogEndOffset() != 20 {
			t.Fatalf("%s: LEO %d after crash, want the 20 made durable by the clean close", tp, l.LogEndOffset())
		}
	}
	if err := m.Delete(tps[2]); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get(tps[2]); ok {
		t.Fatal("deleted log still present")
	}
}

func TestManagerEIOTakesDirOffline(t *testing.T) {
	efs := vfs.NewErrorFS(newDurableMem(t), nil)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, efs, clk, "/data/a", "/data/b")
	defer m.Close()
	la, err := m.GetOrCreate(kafka.TopicPartition{Topic: "a", Partition: 0}, kafka.UUID{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	lb, err := m.GetOrCreate(kafka.TopicPartition{Topic: "b", Partition: 0}, kafka.UUID{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if la.Dir()[:7] == lb.Dir()[:7] {
		t.Fatalf("both logs in one dir: %s %s", la.Dir(), lb.Dir())
	}
	bad := la.Dir()[:7]
	efs.SetInjector(vfs.FailPaths(vfs.UnderDir(bad), syscall.EIO))
	if _, err := la.Append(makeBatch(batchSpec{records: 1, valueSize: 10}), 0); !errors.Is(err, ErrOffline) {
		t.Fatalf("append on failing disk: %v", err)
	}
	if !la.Offline() || len(m.OfflineDirs()) != 1 || m.OfflineDirs()[0] != bad {
		t.Fatalf("offline %v dirs %v", la.Offline(), m.OfflineDirs())
	}
	if _, err := la.Read(0, 100, 1, true); !errors.Is(err, ErrOffline) {
		t.Fatalf("read of offline log: %v", err)
	}
	if _, err := lb.Append(makeBatch(batchSpec{records: 1, valueSize: 10}), 0); err != nil {
		t.Fatalf("append in the healthy dir: %v", err)
	}
	l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "c", Partition: 0}, kafka.UUID{}, testOptions())
	if err != nil || l.Dir()[:7] == bad {
		t.Fatalf("new log placed in offline dir or failed: %v", err)
	}
}

func TestENOSPCFailsAppendsButReadsContinue(t *testing.T) {
	budget := vfs.NewWriteBudget(1 << 30)
	efs := vfs.NewErrorFS(newDurableMem(t), budget)
	clk := clock.NewManual(testStart)
	l, err := Open(efs, "/data/t-0", testTP, testOptions(), clk, StartState{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0); err != nil {
		t.Fatal(err)
	}
	budget.Set(10)
	if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0); !errors.Is(err, ErrStorage) {
		t.Fatalf("append on a full disk: %v", err)
	}
	if l.Offline() {
		t.Fatal("a full disk took the log offline")
	}
	res, err := l.Read(0, 1000, l.LogEndOffset(), true)
	if err != nil || res.Size == 0 {
		t.Fatalf("read on a full disk: %v size %d", err, res.Size)
	}
	budget.Set(1 << 30)
	info, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0)
	if err != nil || info.FirstOffset != 2 {
		t.Fatalf("append after space came back: %+v %v", info, err)
	}
}

// TestENOSPCInIndexWriteIsRetried fails the write of the buffered index
// entries (appends only add them in memory; a flush writes them): the flush
// reports the full disk without taking the log offline, reads still find
// every batch, and the next flush writes the entries, so the reopened log
// has its whole index.
func TestENOSPCInIndexWriteIsRetried(t *testing.T) {
	budget := vfs.NewWriteBudget(1 << 30)
	mem := newDurableMem(t)
	efs := vfs.NewErrorFS(mem, budget)
	opts := testOptions()
	opts.IndexIntervalBytes = 0 // an index entry for every batch after the first
	l, err := Open(efs, "/data/t-0", testTP, opts, clock.NewManual(testStart), StartState{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b := makeBatch(batchSpec{records: 2, valueSize: 50})
	for i := 0; i < 3; i++ {
		if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 50}), 0); err != nil {
			t.Fatal(err)
		}
	}
	budget.Set(int64(len(b))) // the log write fits; no index write happens on append
	if _, err := l.Append(b, 0); err != nil {
		t.Fatalf("append with room for the batch only: %v", err)
	}
	if err := l.Flush(); !errors.Is(err, ErrStorage) || l.Offline() {
		t.Fatalf("flush with no room for the index entries: %v, offline %v", err, l.Offline())
	}
	checkReads := func(l *Log, n int64) {
		t.Helper()
		for off := int64(0); off < n; off++ {
			res, err := l.Read(off, 1, n, true)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := res.Bytes()
			h, err := records.ParseHeader(data)
			if err != nil || h.BaseOffset != off/2*2 {
				t.Fatalf("read %d: header %+v %v", off, h, err)
			}
		}
	}
	checkReads(l, 8)
	budget.Set(1 << 30)
	if err := l.Flush(); err != nil {
		t.Fatalf("flush after space came back: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	idx, err := openOffsetIndex(mem, "/data/t-0/"+segmentFileName(0, indexSuffix), 0, opts.SegmentIndexBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.close()
	if err := idx.ensureResident(); err != nil || idx.entries() != 3 {
		t.Fatalf("index after the retried write: %d entries, %v (want 3)", idx.entries(), err)
	}
	l, err = Open(mem, "/data/t-0", testTP, opts, clock.NewManual(testStart), StartState{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	checkReads(l, 8)
}

// TestManagerDeleteIsDelayed deletes a log the way Kafka does: renamed at
// once, readable by reads in flight, removed after file.delete.delay.ms; a
// deletion interrupted by a stop is finished at the next start.
func TestManagerDeleteIsDelayed(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a")
	tp := kafka.TopicPartition{Topic: "gone", Partition: 3}
	l, err := m.GetOrCreate(tp, kafka.UUID{7}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 10}), 0); err != nil {
		t.Fatal(err)
	}
	res, err := l.Read(0, 1000, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(tp); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Get(tp); ok {
		t.Fatal("deleted log still listed")
	}
	if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 1}), 0); !errors.Is(err, ErrClosed) {
		t.Fatalf("append to a deleted log: %v", err)
	}
	names, _ := fsys.List("/data/a")
	renamed := ""
	for _, n := range names {
		if len(n) > len("gone-3.") && n[:7] == "gone-3." && n[len(n)-7:] == "-delete" {
			renamed = n
		}
	}
	if renamed == "" {
		t.Fatalf("no <topic>-<partition>.<id>-delete dir: %v", names)
	}
	if _, err := res.Bytes(); err != nil {
		t.Fatalf("a read in flight failed after the delete: %v", err)
	}
	if err := m.RemoveDeletedSegments(clk.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat("/data/a/" + renamed); !vfs.IsNotExist(err) {
		t.Fatalf("deleted log dir still there after the delay: %v", err)
	}
	// A leftover from an interrupted deletion is removed at start-up.
	if err := fsys.MkdirAll("/data/a/x-0.abc-delete", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, fsys, clk, "/data/a")
	defer m.Close()
	if _, err := fsys.Stat("/data/a/x-0.abc-delete"); !vfs.IsNotExist(err) {
		t.Fatalf("leftover -delete dir survived start-up: %v", err)
	}
	if len(m.Logs()) != 0 {
		t.Fatalf("logs after start-up: %d", len(m.Logs()))
	}
}
