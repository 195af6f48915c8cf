package commitlog

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// modelBatch is one batch the model expects in the log.
type modelBatch struct {
	base  int64
	bytes []byte
}

// TestPropertyAgainstModel drives a log with random appends, truncations,
// rolls, flushes, clean reopens and crashes (with torn writes) on a MemFS,
// and checks it against a model after every step: what was flushed before a
// crash survives, what was not may be lost only as a suffix, and every
// batch served is one the model holds, byte for byte.
func TestPropertyAgainstModel(t *testing.T) {
	seeds, steps := 60, 400
	if testing.Short() {
		seeds, steps = 4, 150
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { runModel(t, uint64(seed), steps, false) })
	}
}

// TestPropertyAgainstModelRollFlush is TestPropertyAgainstModel with the
// rolls' flushes queued as under a Manager and run at random later steps,
// and half the flushes done as the checkpoint tick's FlushTail: a batch is
// durable once a flush moved the recovery point past it. In both tests a
// crash recovers from the recovery point, often inside a segment.
func TestPropertyAgainstModelRollFlush(t *testing.T) {
	seeds, steps := 60, 400
	if testing.Short() {
		seeds, steps = 4, 150
	}
	for seed := 0; seed < seeds; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { runModel(t, uint64(seed), steps, true) })
	}
}

func runModel(t *testing.T, seed uint64, steps int, async bool) {
	rng := rand.New(rand.NewPCG(seed, 7))
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	opts := testOptions()
	opts.SegmentBytes = int64(2048 + rng.IntN(4096))
	opts.IndexIntervalBytes = rng.IntN(600)
	opts.SegmentIndexBytes = 64 + rng.IntN(200)
	var pending []rollFlush
	open := func(st StartState) *Log {
		l, err := Open(fsys, "/data/t-0", testTP, opts, clk, st, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("seed %d: open: %v", seed, err)
		}
		pending = nil
		if async {
			l.onRoll = func(r rollFlush) { pending = append(pending, r) }
		}
		return l
	}
	l := open(StartState{})
	var model []modelBatch
	durable := 0 // batches of the model known flushed
	next := int64(0)
	for step := 0; step < steps; step++ {
		if len(pending) > 0 && rng.IntN(4) == 0 {
			if err := l.flushRolled(pending[0]); err != nil {
				t.Fatalf("seed %d step %d: roll flush: %v", seed, step, err)
			}
			pending = pending[1:]
			rp := l.RecoveryPoint()
			for durable < len(model) && model[durable].base < rp {
				durable++
			}
		}
		op := rng.IntN(100)
		start := l.LogStartOffset()
		switch {
		case op < 60:
			b := makeBatch(batchSpec{records: 1 + rng.IntN(5), valueSize: rng.IntN(300), timestamp: testStart.UnixMilli() + int64(step)})
			info, err := l.Append(b, int32(step/50))
			if err != nil {
				t.Fatalf("seed %d step %d: append: %v", seed, step, err)
			}
			if info.FirstOffset != next {
				t.Fatalf("seed %d step %d: append at %d, model LEO %d", seed, step, info.FirstOffset, next)
			}
			model = append(model, modelBatch{base: info.FirstOffset, bytes: b})
			h, _ := records.ParseHeader(b)
			next = h.NextOffset()
		case op < 68 && len(model) > 0:
			i := rng.IntN(len(model))
			if err := l.TruncateTo(model[i].base); err != nil {
				t.Fatalf("seed %d step %d: truncate: %v", seed, step, err)
			}
			model, next = model[:i], model[i].base
			// Truncation is made durable like Kafka's follower does before
			// fetching again, so a crash cannot resurrect the cut batches.
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			durable = len(model)
		case op < 72 && len(model) > 0:
			// DeleteRecords up to a batch boundary; whole segments below go.
			i := rng.IntN(len(model))
			if err := l.IncrementLogStartOffset(model[i].base); err != nil {
				t.Fatalf("seed %d step %d: delete records: %v", seed, step, err)
			}
			if _, err := l.ApplyRetention(clk.Now()); err != nil {
				t.Fatalf("seed %d step %d: retention: %v", seed, step, err)
			}
			model = model[i:]
			durable = max(durable-i, 0)
		case op < 75:
			if err := l.Roll(); err != nil {
				t.Fatalf("seed %d step %d: roll: %v", seed, step, err)
			}
		case op < 85 && async && rng.IntN(2) == 0:
			// The checkpoint tick's background tail flush: the recovery
			// point moves inside the active segment, and a later crash
			// recovers from there (segment.recover trusts what is below).
			if err := l.FlushTail(); err != nil {
				t.Fatalf("seed %d step %d: tail flush: %v", seed, step, err)
			}
			rp := l.RecoveryPoint()
			if rp != next {
				t.Fatalf("seed %d step %d: recovery point %d after a tail flush, log end %d", seed, step, rp, next)
			}
			durable = len(model)
		case op < 85:
			if err := l.Flush(); err != nil {
				t.Fatalf("seed %d step %d: flush: %v", seed, step, err)
			}
			durable = len(model)
		case op < 90:
			if err := l.Close(); err != nil {
				t.Fatalf("seed %d step %d: close: %v", seed, step, err)
			}
			l = open(StartState{CleanShutdown: true, LogStartOffset: start})
			durable = len(model)
		default:
			rp := l.RecoveryPoint()
			if rng.IntN(2) == 0 {
				fsys.Crash()
			} else {
				fsys.CrashTornWrites(rng)
			}
			// The log start offset comes back from its checkpoint; segments
			// whose deletion (an unsynced rename) the crash undid lie below it.
			l = open(StartState{RecoveryPoint: rp, LogStartOffset: start})
			got := readAll(t, l)
			if len(got) < durable || len(got) > len(model) {
				t.Fatalf("seed %d step %d: %d batches after crash; %d were durable, %d written", seed, step, len(got), durable, len(model))
			}
			model = model[:len(got)]
			durable = len(model)
			next = l.LogEndOffset()
		}
		checkAgainstModel(t, l, model, next, fmt.Sprintf("seed %d step %d", seed, step))
	}
	l.Close()
}

// readAll reads the whole log through Read, batch by batch.
func readAll(t *testing.T, l *Log) [][]byte {
	t.Helper()
	var out [][]byte
	off := l.LogStartOffset()
	for off < l.LogEndOffset() {
		res, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		data, err := res.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		if len(data) == 0 {
			t.Fatalf("read %d below LEO %d returned nothing", off, l.LogEndOffset())
		}
		if _, err := records.Batches(data, func(h records.Header, b []byte) error {
			if err := records.CheckCRC(b); err != nil {
				return err
			}
			out = append(out, append([]byte(nil), b...))
			off = h.NextOffset()
			return nil
		}); err != nil {
			t.Fatalf("read %d served a bad batch: %v", off, err)
		}
	}
	return out
}

func checkAgainstModel(t *testing.T, l *Log, model []modelBatch, next int64, where string) {
	t.Helper()
	if l.LogEndOffset() != next {
		t.Fatalf("%s: LEO %d, model %d", where, l.LogEndOffset(), next)
	}
	got := readAll(t, l)
	if len(got) != len(model) {
		t.Fatalf("%s: %d batches, model %d", where, len(got), len(model))
	}
	for i := range got {
		if !bytes.Equal(got[i], model[i].bytes) {
			t.Fatalf("%s: batch %d (offset %d) differs from the model", where, i, model[i].base)
		}
	}
	// A random offset reads the batch holding it.
	if len(model) > 0 {
		i := len(model) / 2
		res, err := l.Read(model[i].base, 1, next, true)
		if err != nil {
			t.Fatalf("%s: read %d: %v", where, model[i].base, err)
		}
		data, _ := res.Bytes()
		if !bytes.Equal(data, model[i].bytes) {
			t.Fatalf("%s: read %d did not return its batch", where, model[i].base)
		}
	}
}

var _ vfs.FS = (*vfs.MemFS)(nil)
