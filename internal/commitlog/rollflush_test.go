package commitlog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// rollEnv is a log on an ErrorFS over a MemFS whose rolls queue their
// flushes in pending instead of a Manager's flusher, so a test runs each
// step (roll, background flush, checkpoint, crash, recovery) by hand.
type rollEnv struct {
	t       *testing.T
	mem     *vfs.MemFS
	efs     *vfs.ErrorFS
	clk     *clock.Manual
	l       *Log
	pending []rollFlush
	acked   [][]byte // every batch whose append returned, as stored
}

const rollDir = "/data/t-0"

func newRollEnv(t *testing.T) *rollEnv {
	mem := newDurableMem(t)
	e := &rollEnv{t: t, mem: mem, efs: vfs.NewErrorFS(mem, nil), clk: clock.NewManual(testStart)}
	e.open(StartState{})
	// The first append records leader epoch 0, which writes the
	// leader-epoch-checkpoint (synced, once per new epoch, not per roll).
	e.appendOne()
	return e
}

func (e *rollEnv) appendOne() {
	e.t.Helper()
	b := makeBatch(batchSpec{records: 5, valueSize: 100, timestamp: testStart.UnixMilli()})
	if _, err := e.l.Append(b, 0); err != nil {
		e.t.Fatal(err)
	}
	e.acked = append(e.acked, b)
}

func (e *rollEnv) open(st StartState) {
	e.t.Helper()
	l, err := Open(e.efs, rollDir, testTP, testOptions(), e.clk, st, slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	l.onRoll = func(r rollFlush) { e.pending = append(e.pending, r) }
	e.l = l
}

// appendUntilRolls appends ~700-byte batches until rolls more segments were
// sealed; no fsync may happen meanwhile.
func (e *rollEnv) appendUntilRolls(rolls int) {
	e.t.Helper()
	var syncs atomic.Int64
	e.efs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, path string, _ int) error {
		if op == vfs.OpSync || op == vfs.OpSyncDir {
			syncs.Add(1)
			e.t.Errorf("sync under the append lock: %v %s", op, path)
		}
		return nil
	}))
	defer e.efs.SetInjector(nil)
	want := len(e.pending) + rolls
	for len(e.pending) < want {
		e.appendOne()
	}
	if n := syncs.Load(); n != 0 {
		e.t.Fatalf("%d fsyncs under the append lock across %d rolls", n, rolls)
	}
}

// crashAndRecover crashes the disk and opens the log as a Manager would
// after an unclean stop, with checkpointed as the recovery point.
func (e *rollEnv) crashAndRecover(checkpointed int64) {
	e.t.Helper()
	e.efs.SetInjector(nil)
	e.mem.Crash()
	e.pending = nil
	e.open(StartState{RecoveryPoint: checkpointed})
}

// checkDurableBelow checks every acknowledged batch below rp survived,
// byte for byte, at its offset.
func (e *rollEnv) checkDurableBelow(rp int64, where string) {
	e.t.Helper()
	if leo := e.l.LogEndOffset(); leo < rp {
		e.t.Fatalf("%s: log end %d below the checkpointed recovery point %d", where, leo, rp)
	}
	got := readAll(e.t, e.l)
	for i, want := range e.acked {
		if batchBase(want) >= rp {
			break
		}
		if i >= len(got) || !bytes.Equal(got[i], want) {
			e.t.Fatalf("%s: acknowledged batch %d at offset %d (below recovery point %d) lost", where, i, batchBase(want), rp)
		}
	}
}

func batchBase(b []byte) int64 {
	var v int64
	for _, c := range b[:8] {
		v = v<<8 | int64(c)
	}
	return v
}

// TestRollFlushAdvancesRecoveryPoint: a roll syncs nothing and leaves the
// recovery point; its flush, run later, syncs and moves it to the new
// segment's base, and a crash after it keeps everything below.
func TestRollFlushAdvancesRecoveryPoint(t *testing.T) {
	e := newRollEnv(t)
	e.appendUntilRolls(3)
	if rp := e.l.RecoveryPoint(); rp != 0 {
		t.Fatalf("recovery point %d moved before any flush ran", rp)
	}
	for i, r := range e.pending {
		if err := e.l.flushRolled(r); err != nil {
			t.Fatal(err)
		}
		if rp := e.l.RecoveryPoint(); rp != r.next.baseOffset {
			t.Fatalf("flush %d: recovery point %d, want the new segment's base %d", i, rp, r.next.baseOffset)
		}
	}
	rp := e.l.RecoveryPoint()
	e.crashAndRecover(rp)
	defer e.l.Close()
	e.checkDurableBelow(rp, "after flush and crash")
}

// TestRollFlushCrashAtEverySync crashes the disk at each fsync of a
// background flush in turn: the recovery point stays where it was until
// the flush completes, and recovery from the last checkpoint loses no
// batch below it.
func TestRollFlushCrashAtEverySync(t *testing.T) {
	for k := 1; ; k++ {
		e := newRollEnv(t)
		e.appendUntilRolls(1)
		if err := e.l.flushRolled(e.pending[0]); err != nil {
			t.Fatal(err)
		}
		checkpointed := e.l.RecoveryPoint() // what the Manager's checkpoint wrote
		e.appendUntilRolls(2)
		crashed := e.crashAtSync(k, e.mem.Crash)
		var ferr error
		before := checkpointed // the recovery point before the flush that crashed
		for _, r := range e.pending[1:] {
			before = e.l.RecoveryPoint()
			if ferr = e.l.flushRolled(r); ferr != nil {
				break
			}
		}
		if crashed() {
			// The strongest claim: the recovery point as it stood (a
			// checkpoint written since the last completed flush says it).
			e.checkCrashedFlush(k, ferr, before)
			continue
		}
		if ferr != nil {
			t.Fatal(ferr)
		}
		rp := e.l.RecoveryPoint()
		if rp != e.pending[len(e.pending)-1].next.baseOffset {
			t.Fatalf("recovery point %d after every flush, want %d", rp, e.pending[len(e.pending)-1].next.baseOffset)
		}
		e.crashAndRecover(rp)
		e.checkDurableBelow(rp, "crash after the flushes")
		e.l.Close()
		if k < 3 {
			t.Fatalf("only %d syncs in two background flushes", k-1)
		}
		return
	}
}

// crashAtSync makes the k-th fsync (of a file or a dir) from now on crash
// the disk (crash) and fail, and every later I/O fail: the process is dead,
// nothing more reaches the disk. The result reports whether it came.
func (e *rollEnv) crashAtSync(k int, crash func()) (crashed func() bool) {
	var n atomic.Int64
	e.efs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, _ string, _ int) error {
		if (op == vfs.OpSync || op == vfs.OpSyncDir) && n.Add(1) == int64(k) {
			crash()
			return errCrashed
		}
		if n.Load() >= int64(k) {
			return errCrashed
		}
		return nil
	}))
	return func() bool { return n.Load() >= int64(k) }
}

var errCrashed = errors.New("crashed")

// checkCrashedFlush: a flush that crashed at sync k reported its failure,
// left the recovery point where it was (before), and recovery from there
// keeps every batch below it.
func (e *rollEnv) checkCrashedFlush(k int, ferr error, before int64) {
	e.t.Helper()
	if ferr == nil {
		e.t.Fatalf("sync %d: a flush that crashed reported success", k)
	}
	if rp := e.l.RecoveryPoint(); rp != before {
		e.t.Fatalf("sync %d: recovery point moved to %d by a flush that crashed (was %d)", k, rp, before)
	}
	e.crashAndRecover(before)
	e.checkDurableBelow(before, fmt.Sprint("crash at sync ", k))
	e.l.Close()
}

// TestRecoveryRevalidatesFromCheckpoint: after an unclean stop only the
// segments at or above the checkpointed recovery point are re-read. A
// corrupt batch planted below it goes unnoticed (its segment is trusted,
// as Kafka trusts it); with recovery point 0 the same log is cut there.
func TestRecoveryRevalidatesFromCheckpoint(t *testing.T) {
	e := newRollEnv(t)
	e.appendUntilRolls(3)
	for _, r := range e.pending {
		if err := e.l.flushRolled(r); err != nil {
			t.Fatal(err)
		}
	}
	rp := e.l.RecoveryPoint()
	leo := e.l.LogEndOffset()
	e.crashAndRecover(rp)
	e.l.Close()
	// Damage the second batch of the first segment (a CRC-covered byte).
	f, err := e.mem.OpenReadWrite(rollDir + "/00000000000000000000.log")
	if err != nil {
		t.Fatal(err)
	}
	pos := int64(len(e.acked[0]) + 100)
	if _, err := f.WriteAt([]byte{0xff, 0xee}, pos); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
	e.open(StartState{RecoveryPoint: rp})
	if got := e.l.LogEndOffset(); got < rp {
		t.Fatalf("recovery from checkpoint %d re-validated below it: log end %d", rp, got)
	}
	e.l.Close()
	e.open(StartState{RecoveryPoint: 0})
	defer e.l.Close()
	if got, want := e.l.LogEndOffset(), batchBase(e.acked[1]); got != want || leo <= want {
		t.Fatalf("recovery from 0: log end %d, want the damaged batch's offset %d", got, want)
	}
}

// TestManagerFlushesRollsAndCheckpoints runs the Manager's own flusher and
// scheduler: rolls advance the recovery point once the flusher synced the
// sealed segments, the recovery-point-offset-checkpoint follows every
// log.flush.offset.checkpoint.interval.ms (Kafka's 60 s default), and a
// crash after it keeps every batch below the checkpointed offset.
func TestManagerFlushesRollsAndCheckpoints(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a")
	m.Start(t.Context())
	tp := kafka.TopicPartition{Topic: "f", Partition: 0}
	l, err := m.GetOrCreate(tp, kafka.UUID{7}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var acked [][]byte
	for len(l.Segments()) < 8 {
		b := makeBatch(batchSpec{records: 5, valueSize: 100, timestamp: testStart.UnixMilli()})
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, b)
	}
	m.flusher.drain()
	segs := l.Segments()
	rp := l.RecoveryPoint()
	if want := segs[len(segs)-1].BaseOffset; rp != want {
		t.Fatalf("recovery point %d after the flusher drained, want the active segment's base %d", rp, want)
	}
	cpPath := "/data/a/" + checkpoint.RecoveryPointFile
	written := func() int64 {
		offs, err := checkpoint.Read(fsys, cpPath)
		if err != nil {
			return -1
		}
		return offs[tp]
	}
	if got := written(); got >= rp {
		t.Fatalf("checkpoint %d written before its interval", got)
	}
	clk.BlockUntil(2) // the scheduler's and the mover's tickers
	clk.Advance(time.Minute)
	// The checkpoint tick also syncs the active segment's tail (FlushTail):
	// the checkpoint vouches for the whole log, not only the sealed segments.
	leo := l.LogEndOffset()
	testutil.Eventually(t, 10*time.Second, func() bool { return written() == leo }, "recovery-point checkpoint")
	if l.RecoveryPoint() != leo {
		t.Fatalf("recovery point %d after the checkpoint tick, want the log end %d", l.RecoveryPoint(), leo)
	}
	// Stop the goroutines without the clean close's flush, then crash.
	m.stop()
	<-m.done
	m.flusher.close()
	fsys.Crash()
	m = newTestManager(t, fsys, clk, "/data/a")
	defer m.Close()
	l, _ = m.Get(tp)
	e := &rollEnv{t: t, l: l, acked: acked}
	e.checkDurableBelow(leo, "manager crash after checkpoint")
}

// TestCrashHoleWithDataAfterIt: the crash kept a newer segment's data but
// not the unflushed tail of the sealed one before it (its roll's flush had
// not run). A non-compacted log keeps what precedes the hole (a crash
// loses only a suffix of unflushed records) and serves on; a compacted
// log, where holes are legitimate, keeps the hole and the data after it.
func TestCrashHoleWithDataAfterIt(t *testing.T) {
	for _, compact := range []bool{false, true} {
		t.Run(fmt.Sprint("compact=", compact), func(t *testing.T) {
			e := newRollEnv(t)
			e.appendUntilRolls(1)
			if err := e.l.flushRolled(e.pending[0]); err != nil {
				t.Fatal(err)
			}
			rp := e.l.RecoveryPoint()
			e.appendUntilRolls(1)
			e.appendOne()
			segs := e.l.Segments()
			newest := segs[len(segs)-1]
			// What writeback might have done: the newest segment's data
			// and the directory reached the disk, the sealed one's did not.
			f, err := e.mem.OpenReadWrite(fmt.Sprintf("%s/%020d.log", rollDir, newest.BaseOffset))
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(f.Sync(), f.Close(), e.mem.SyncDir(rollDir)); err != nil {
				t.Fatal(err)
			}
			e.mem.Crash()
			opts := testOptions()
			opts.Compact = compact
			l, err := Open(e.mem, rollDir, testTP, opts, e.clk, StartState{RecoveryPoint: rp}, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.Offline() {
				t.Fatalf("log stopped by the crash's hole: %v", l.OfflineErr())
			}
			want := rp
			if compact {
				want = newest.NextOffset
			}
			if got := l.LogEndOffset(); got != want {
				t.Fatalf("log end %d after the crash, want %d", got, want)
			}
			e.l = l
			e.checkDurableBelow(rp, "hole")
			if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 10}), 1); err != nil {
				t.Fatalf("append after the crash: %v", err)
			}
		})
	}
}
