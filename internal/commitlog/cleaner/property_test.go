package cleaner

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

var errInjected = errors.New("injected I/O failure")

// TestPropertyAgainstModel runs random appends, deletes (tombstones),
// rolls, cleans, clock moves and crashes (some in the middle of a clean,
// at a random file operation) and checks after every step that a reader
// from the start sees exactly the model's latest value of each key, with
// the original offsets.
func TestPropertyAgainstModel(t *testing.T) {
	seeds, steps := 8, 400
	if testing.Short() {
		seeds, steps = 2, 150
	}
	for s := range seeds {
		seed := uint64(s + 1)
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runProperty(t, seed, steps) })
	}
}

func runProperty(t *testing.T, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, seed))
	mem := durableMem(t)
	efs := vfs.NewErrorFS(mem, nil)
	clk := clock.NewManual(testStart)
	opts := compactOptions()
	opts.SegmentBytes = 1024
	l := openLog(t, efs, clk, opts, false)
	src := &logSource{}
	src.set(l)
	c := newCleaner(t, efs, src, clk)
	m := model{}
	crash := func() {
		mem.Crash()
		l = openLog(t, efs, clk, opts, false)
		src.set(l)
		clk.Advance(time.Second) // past the failed clean's backoff
	}
	defer func() { l.Close() }()
	for step := range steps {
		var what string
		switch p := rng.IntN(100); {
		case p < 50:
			n := 1 + rng.IntN(3)
			recs := make([]kv, n)
			for i := range recs {
				recs[i] = kv{key: key(rng.IntN(25)), value: fmt.Sprintf("s%d-%d", step, i), tombstone: rng.IntN(5) == 0}
			}
			codec := []int{records.NoCompression, records.ZstdCompression, records.SnappyCompression}[rng.IntN(3)]
			m.apply(appendRecords(t, l, clk, codec, recs...), recs...)
			what = fmt.Sprintf("append %d", n)
		case p < 58:
			if err := l.Roll(); err != nil {
				t.Fatalf("seed %d step %d: roll: %v", seed, step, err)
			}
			what = "roll"
		case p < 75:
			if _, err := c.CleanOnce(t.Context()); err != nil {
				t.Fatalf("seed %d step %d: clean: %v", seed, step, err)
			}
			what = "clean"
		case p < 85:
			clk.Advance(time.Duration(rng.IntN(40)) * time.Minute)
			what = "advance clock"
		case p < 95:
			// Crash in the middle of a clean: the k-th file operation fails.
			if err := l.Flush(); err != nil {
				t.Fatalf("seed %d step %d: flush: %v", seed, step, err)
			}
			var ops atomic.Int64
			k := int64(1 + rng.IntN(60))
			efs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, path string, _ int) error {
				if ops.Add(1) == k {
					return fmt.Errorf("%w: %s %s", errInjected, op, path)
				}
				return nil
			}))
			_, err := c.CleanOnce(t.Context())
			efs.SetInjector(nil)
			if err != nil && !errors.Is(err, errInjected) {
				t.Fatalf("seed %d step %d: clean failed without the injected error: %v", seed, step, err)
			}
			crash()
			what = fmt.Sprintf("crash at operation %d of a clean (err %v)", k, err)
		default:
			if err := l.Flush(); err != nil {
				t.Fatalf("seed %d step %d: flush: %v", seed, step, err)
			}
			crash()
			what = "crash"
		}
		t.Logf("seed %d step %d: %s", seed, step, what)
		checkAgainstModel(t, l, m)
	}
}
