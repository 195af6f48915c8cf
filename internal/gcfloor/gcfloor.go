// Package gcfloor keeps the Go garbage collector's heap goal at or above a
// floor. A broker's live heap is small (a few MiB with a handful of
// partitions) while it allocates hundreds of MB/s of short-lived buffers on
// the replication path (a follower's fetch answers), so with GOGC's default
// of 100 the collector runs dozens of cycles a second: 12% of a follower's
// CPU in issue 24's replicated profile. Raising GOGC while the live heap is
// small, and only then, keeps the goal at the floor; a large live heap (many
// partitions) leaves GOGC at 100, so the floor costs at most its own size in
// memory. Kafka's brokers run with a 1 GiB heap; the default floor here is
// 64 MiB.
package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// DefaultFloor is the heap goal sluice server keeps at least.
const DefaultFloor = 64 << 20

// defaultPercent is GOGC's default, restored on stop and kept whenever the
// live heap alone reaches half the floor.
const defaultPercent = 100

// heapMinimum is the runtime's smallest heap goal at GOGC 100; it scales
// with GOGC (4 MiB × GOGC/100), so GOGC above floor/heapMinimum × 100 would
// hold a goal above the floor even for an empty heap.
const heapMinimum = 4 << 20

const liveMetric = "/gc/heap/live:bytes"

// Start keeps the heap goal at least floor bytes until stop is called, by
// setting GOGC after each collection from the live heap it left. It does
// nothing when the environment sets GOGC (the operator's choice stands) or
// floor is 0, and reports whether it runs. stop restores GOGC's default.
func Start(floor uint64) (stop func(), running bool) {
	if _, set := os.LookupEnv("GOGC"); set || floor == 0 {
		return func() {}, false
	}
	t := &tuner{floor: floor, last: defaultPercent}
	t.sample[0].Name = liveMetric
	t.adjust()
	t.arm()
	return t.stop, true
}

// Percent is the GOGC that keeps the heap goal at least floor, and not much
// above it, for a live heap of live bytes; never below GOGC's default. The
// runtime's goal is the larger of live × (1 + GOGC/100) and
// heapMinimum × GOGC/100.
func Percent(floor, live uint64) int {
	if live*2 >= floor {
		return defaultPercent
	}
	most := max(floor*100/heapMinimum, defaultPercent)
	if live == 0 {
		return int(most)
	}
	p := (floor*100+live-1)/live - 100
	return int(min(p, most))
}

// goal is the runtime's heap goal for a live heap and GOGC percent.
func goal(live uint64, percent int) uint64 {
	p := uint64(percent)
	return max(live+live*p/100, heapMinimum*p/100)
}

type tuner struct {
	floor uint64

	mu      sync.Mutex
	stopped bool
	last    int // the GOGC last set
	sample  [1]metrics.Sample
}

// sentinel is garbage whose cleanup runs after the collection that found it
// unreachable: one adjustment per cycle. Large enough not to share a tiny
// allocator block, whose cleanups may never run.
type sentinel [64]byte

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), func(t *tuner) {
		if t.adjust() {
			t.arm()
		}
	}, t)
}

// adjust sets GOGC from the live heap; false once stopped.
func (t *tuner) adjust() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return false
	}
	metrics.Read(t.sample[:])
	var live uint64
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	p := Percent(t.floor, live)
	// Setting GOGC takes the heap lock: changes under an eighth are skipped,
	// so the goal may sit up to an eighth off the floor between them.
	if d := p - t.last; d != 0 && (p == defaultPercent || d > t.last/8 || -d > t.last/8) {
		debug.SetGCPercent(p)
		t.last = p
	}
	return true
}

func (t *tuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.stopped = true
	debug.SetGCPercent(defaultPercent)
}
