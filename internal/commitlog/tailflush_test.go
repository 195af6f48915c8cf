package commitlog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// appendUnsynced appends n batches to the active segment (no roll: the
// test segment is large enough) without any fsync.
func (e *rollEnv) appendUnsynced(n int) {
	e.t.Helper()
	for range n {
		e.appendOne()
	}
}

// TestFlushTailCrashAtEverySync crashes the disk at each fsync of a tail
// flush in turn (sealed segments awaiting their roll's flush plus the
// active one): the recovery point does not move for a flush that crashed,
// and recovery from it keeps every batch below it; after a flush that
// completed, recovery from the log end keeps the whole log.
func TestFlushTailCrashAtEverySync(t *testing.T) {
	for k := 1; ; k++ {
		e := newRollEnv(t)
		e.appendUntilRolls(2)
		e.appendUnsynced(3)
		before := e.l.RecoveryPoint()
		leo := e.l.LogEndOffset()
		crashed := e.crashAtSync(k, func() { e.mem.CrashTornWrites(rand.New(rand.NewPCG(uint64(k), 3))) })
		ferr := e.l.FlushTail()
		if crashed() {
			e.checkCrashedFlush(k, ferr, before)
			continue
		}
		if ferr != nil {
			t.Fatal(ferr)
		}
		if rp := e.l.RecoveryPoint(); rp != leo {
			t.Fatalf("recovery point %d after the tail flush, want the log end %d", rp, leo)
		}
		// Unsynced appends after it may be lost (torn), never what is below.
		e.appendUnsynced(4)
		e.efs.SetInjector(nil)
		e.mem.CrashTornWrites(rand.New(rand.NewPCG(uint64(k), 4)))
		e.pending = nil
		e.open(StartState{RecoveryPoint: leo})
		e.checkDurableBelow(leo, "crash after the tail flush")
		e.l.Close()
		if k < 4 {
			t.Fatalf("only %d syncs in a tail flush over three segments", k-1)
		}
		return
	}
}

// TestRecoveryFromInsideSegment: with the recovery point inside the active
// segment, recovery trusts the batches below it (a corrupt one planted
// there goes unnoticed, as in a trusted sealed segment), validates those
// above it (a corrupt one there cuts the log), and rebuilds the offset
// index over the whole segment, so reads below the recovery point find
// their batches. Recovery from 0 cuts at the planted batch below.
func TestRecoveryFromInsideSegment(t *testing.T) {
	e := newRollEnv(t)
	opts := testOptions()
	opts.SegmentBytes = 1 << 20 // one segment holds the whole test
	e.l.SetOptions(opts)
	e.appendUnsynced(40)
	if err := e.l.FlushTail(); err != nil {
		t.Fatal(err)
	}
	rp := e.l.RecoveryPoint()
	if segs := e.l.Segments(); len(segs) != 1 || rp != e.l.LogEndOffset() {
		t.Fatalf("want one segment flushed to its end, got %d segments, recovery point %d, log end %d", len(segs), rp, e.l.LogEndOffset())
	}
	e.appendUnsynced(20)
	if err := e.l.Flush(); err != nil { // the bytes above rp are durable too: the damage below is the only cut
		t.Fatal(err)
	}
	e.l.Close()
	damage := func(i int) {
		f, err := e.mem.OpenReadWrite(rollDir + "/00000000000000000000.log")
		if err != nil {
			t.Fatal(err)
		}
		var pos int64
		for _, b := range e.acked[:i] {
			pos += int64(len(b))
		}
		if _, err := f.WriteAt([]byte{0xff, 0xee}, pos+100); err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(f.Sync(), f.Close()); err != nil {
			t.Fatal(err)
		}
	}
	below, above := 10, 50 // acked[0] is newRollEnv's batch; 41 batches below rp
	if batchBase(e.acked[below+1]) > rp || batchBase(e.acked[above]) < rp {
		t.Fatalf("test layout: batch %d or %d on the wrong side of %d", below, above, rp)
	}
	damage(below)
	damage(above)
	e.open(StartState{RecoveryPoint: rp})
	if got, want := e.l.LogEndOffset(), batchBase(e.acked[above]); got != want {
		t.Fatalf("recovery from %d: log end %d, want the damaged batch above it at %d", rp, got, want)
	}
	e.l.mu.RLock()
	entries := e.l.activeLocked().index.entries()
	e.l.mu.RUnlock()
	if entries < 20 {
		t.Fatalf("offset index rebuilt with %d entries", entries)
	}
	for i, b := range e.acked[:above] {
		if i == below {
			continue // trusted, so served as it is: reads report the damage
		}
		res, err := e.l.Read(batchBase(b), 1, e.l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read batch %d: %v", i, err)
		}
		if data, _ := res.Bytes(); len(data) < len(b) || string(data[:len(b)]) != string(b) {
			t.Fatalf("read at %d did not return batch %d", batchBase(b), i)
		}
	}
	e.l.Close()
	e.open(StartState{RecoveryPoint: 0})
	defer e.l.Close()
	if got, want := e.l.LogEndOffset(), batchBase(e.acked[below]); got != want {
		t.Fatalf("recovery from 0: log end %d, want the damaged batch at %d", got, want)
	}
}

// TestFlushTailRacingTruncation: a truncation (and appends past the old
// end) while a tail flush syncs must leave the recovery point where the
// truncation put it: the bytes now below the observed end were not synced.
func TestFlushTailRacingTruncation(t *testing.T) {
	for _, c := range []struct {
		segmentBytes int64
		reappend     bool
	}{{4096, false}, {4096, true}, {1 << 20, false}, {1 << 20, true}} {
		reappend := c.reappend
		t.Run(fmt.Sprint("segment.bytes=", c.segmentBytes, "/reappend=", reappend), func(t *testing.T) {
			e := newRollEnv(t)
			opts := testOptions()
			opts.SegmentBytes = c.segmentBytes // 1 MiB: the truncation is inside the active segment
			e.l.SetOptions(opts)
			e.appendUnsynced(10)
			if err := e.l.Flush(); err != nil {
				t.Fatal(err)
			}
			e.appendUnsynced(10)
			cut := batchBase(e.acked[5])
			var once atomic.Bool
			e.efs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, _ string, _ int) error {
				if op == vfs.OpSync && once.CompareAndSwap(false, true) {
					// FlushTail holds no lock while it syncs.
					if err := e.l.TruncateTo(cut); err != nil {
						t.Error(err)
					}
					e.acked = e.acked[:5]
					if reappend {
						e.appendUnsynced(30)
					}
				}
				return nil
			}))
			if err := e.l.FlushTail(); err != nil {
				t.Fatal(err)
			}
			e.efs.SetInjector(nil)
			if !once.Load() {
				t.Fatal("the tail flush synced nothing")
			}
			if rp, leo := e.l.RecoveryPoint(), e.l.LogEndOffset(); rp > cut || rp > leo {
				t.Fatalf("recovery point %d after a truncation to %d raced the tail flush (log end %d)", rp, cut, leo)
			}
			e.l.Close()
		})
	}
}

// TestFlushTailSnapshotsProducers: the tail flush leaves a synced producer
// snapshot at the recovery point, and recovery replays the producer state
// from it, not from the active segment's base: a producer id planted in a
// batch header below the recovery point (trusted bytes) never reaches the
// state, while the real producer's sequences continue across the crash. A
// second tail flush removes the first one's snapshot.
func TestFlushTailSnapshotsProducers(t *testing.T) {
	e := newRollEnv(t)
	opts := testOptions()
	opts.SegmentBytes = 1 << 20
	e.l.SetOptions(opts)
	var seq int32
	appendIdem := func(n int) {
		for range n {
			b := idempotentBatch(seq, 2)
			if _, err := e.l.Append(b, 0); err != nil {
				t.Fatal(err)
			}
			e.acked = append(e.acked, b)
			seq += 2
		}
	}
	appendIdem(10)
	if err := e.l.FlushTail(); err != nil {
		t.Fatal(err)
	}
	first := e.l.RecoveryPoint()
	appendIdem(10)
	if err := e.l.FlushTail(); err != nil {
		t.Fatal(err)
	}
	rp := e.l.RecoveryPoint()
	offs, err := e.l.mu.producers.SnapshotOffsets()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(offs, rp) || slices.Contains(offs, first) {
		t.Fatalf("producer snapshots %v after tail flushes to %d then %d: want %d only", offs, first, rp, rp)
	}
	appendIdem(5) // above the recovery point, unsynced
	e.efs.SetInjector(nil)
	e.mem.CrashTornWrites(rand.New(rand.NewPCG(1, 2)))
	// Plant producer id 77 in the header of batch 3 (below the recovery point).
	var pos int64
	for _, b := range e.acked[:3] {
		pos += int64(len(b))
	}
	f, err := e.mem.OpenReadWrite(rollDir + "/00000000000000000000.log")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0, 0, 0, 0, 0, 0, 0, 77}, pos+43); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		t.Fatal(err)
	}
	e.pending = nil
	e.open(StartState{RecoveryPoint: rp})
	defer e.l.Close()
	if _, ok := e.l.ProducerEntry(77); ok {
		t.Fatal("producer state replayed from below the recovery point's snapshot")
	}
	leo := e.l.LogEndOffset()
	// The next sequence is the one after the last batch that survived.
	next := int32(leo - batchBase(e.acked[1])) // acked[0] is not idempotent; 2 records a batch, sequences from 0
	if info, err := e.l.Append(idempotentBatch(next, 2), 0); err != nil || info.Duplicate {
		t.Fatalf("append of sequence %d after recovery to %d: %+v, %v", next, leo, info, err)
	}
	if dup, err := e.l.Append(idempotentBatch(0, 2), 0); err == nil && !dup.Duplicate {
		t.Fatal("a batch below the recovery point was not known after recovery")
	}
}

// TestFlushTailConcurrentWithAppends runs tail flushes while another
// goroutine appends across rolls (for the race detector): the recovery
// point never passes the log end, and a crash keeps every batch below the
// last one.
func TestFlushTailConcurrentWithAppends(t *testing.T) {
	e := newRollEnv(t)
	done := make(chan struct{})
	var appended [][]byte
	go func() {
		defer close(done)
		for range 300 {
			b := makeBatch(batchSpec{records: 3, valueSize: 80, timestamp: testStart.UnixMilli()})
			if _, err := e.l.Append(b, 0); err != nil {
				t.Error(err)
				return
			}
			appended = append(appended, b)
		}
	}()
	flushes := 0
	for running := true; running; flushes++ {
		select {
		case <-done:
			running = false
		default:
		}
		if err := e.l.FlushTail(); err != nil {
			t.Fatal(err)
		}
		if rp, leo := e.l.RecoveryPoint(), e.l.LogEndOffset(); rp > leo {
			t.Fatalf("recovery point %d above the log end %d", rp, leo)
		}
	}
	e.acked = append(e.acked, appended...)
	rp := e.l.RecoveryPoint()
	if rp != e.l.LogEndOffset() {
		t.Fatalf("recovery point %d after the last tail flush, log end %d", rp, e.l.LogEndOffset())
	}
	e.crashAndRecover(rp)
	defer e.l.Close()
	e.checkDurableBelow(rp, fmt.Sprintf("crash after %d tail flushes during appends", flushes))
}

// TestTailFlushSkipsQuietLogs: the checkpoint tick syncs the tail of a log
// that took TailFlushMinBytes since its last tail flush and leaves a
// quieter one for a later tick, its bytes adding up meanwhile.
func TestTailFlushSkipsQuietLogs(t *testing.T) {
	clk := clock.NewManual(testStart)
	m := newTestManager(t, newDurableMem(t), clk, "/data/a")
	defer m.Close()
	// appendN's batches: 3 records each.
	m.opts.TailFlushMinBytes = int64(3 * len(makeBatch(batchSpec{records: 3, valueSize: 200})))
	logOf := func(p int32, batches int) *Log {
		l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "q", Partition: p}, kafka.UUID{9}, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, batches)
		return l
	}
	quiet, busy := logOf(0, 2), logOf(1, 3)
	if err := m.FlushTailsAndCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if got := quiet.RecoveryPoint(); got != 0 {
		t.Fatalf("quiet log (2 batches) flushed: recovery point %d", got)
	}
	if got, want := busy.RecoveryPoint(), busy.LogEndOffset(); got != want {
		t.Fatalf("busy log (3 batches): recovery point %d, want its log end %d", got, want)
	}
	appendN(t, quiet, 1)
	appendN(t, busy, 1)
	if err := m.FlushTailsAndCheckpoint(); err != nil {
		t.Fatal(err)
	}
	if got, want := quiet.RecoveryPoint(), quiet.LogEndOffset(); got != want {
		t.Fatalf("quiet log after 3 batches in two ticks: recovery point %d, want its log end %d", got, want)
	}
	if got, want := busy.RecoveryPoint(), busy.LogEndOffset()-3; got != want {
		t.Fatalf("busy log after 1 more batch: recovery point %d, want %d (unchanged)", got, want)
	}
}

// TestCheckpointTickDelaysNoOtherTask: the recovery-point checkpoint tick
// runs in its own goroutine, so a tail flush waiting on a slow disk does
// not hold up the scheduler's other tasks (here the log-start-offset
// checkpoint, due at the same tick).
func TestCheckpointTickDelaysNoOtherTask(t *testing.T) {
	release, blocked := make(chan struct{}), make(chan struct{}, 1)
	var armed atomic.Bool
	unblock := sync.OnceFunc(func() { armed.Store(false); close(release) })
	t.Cleanup(unblock)
	fsys := vfs.NewErrorFS(newDurableMem(t), vfs.InjectorFunc(func(op vfs.Op, path string, _ int) error {
		if armed.Load() && op == vfs.OpSync && strings.HasSuffix(path, logSuffix) {
			select {
			case blocked <- struct{}{}:
			default:
			}
			<-release
		}
		return nil
	}))
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a")
	m.Start(t.Context())
	l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "slow", Partition: 0}, kafka.UUID{8}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 3)
	armed.Store(true)
	clk.BlockUntil(2) // the scheduler's and the mover's tickers
	clk.Advance(time.Minute)
	select {
	case <-blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("the checkpoint tick never synced the log's tail")
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, err := checkpoint.Read(fsys, "/data/a/"+checkpoint.LogStartOffsetFile)
		return err == nil
	}, "log-start-offset checkpoint while the tail flush waits on the disk")
	if got := l.RecoveryPoint(); got != 0 {
		t.Fatalf("recovery point %d before the tail's sync returned", got)
	}
	unblock()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}
