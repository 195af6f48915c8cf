package server

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultRequestMemoryBudget is sluice.queued.max.request.bytes when unset:
// the cap on request buffers in flight when Kafka's queued.max.request.bytes
// keeps its default (-1, unbounded). Room for two requests of Kafka's
// largest default size (socket.request.max.bytes, 100 MiB) and more, and
// one request may always overdraw it (see requestMemory).
const DefaultRequestMemoryBudget = 256 << 20

// RequestMemoryBudget reads sluice.queued.max.request.bytes from its raw
// value: unset is DefaultRequestMemoryBudget, zero or negative is unbounded.
func RequestMemoryBudget(raw string, set bool) (int64, error) {
	if !set {
		return DefaultRequestMemoryBudget, nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("sluice.queued.max.request.bytes %q: %w", raw, err)
	}
	return v, nil
}

// Request buffers come from size classes of powers of two, so a buffer a
// Produce or Fetch left behind serves the next request of any connection
// (see frameReusableAfter); larger buffers are allocated to size and left to
// the garbage collector. sync.Pool gives its memory back to the collector
// when idle, so the pool is bounded by the load rather than by a count of
// connections, unlike the per-connection buffer it replaces.
const (
	minClassShift = 9  // 512 B
	maxClassShift = 20 // 1 MiB
	// firstChunk is the most a frame allocates before its bytes show it
	// needs more: a large size prefix with little behind it holds no more
	// than this; each further step is four times larger, up to the frame's
	// size (see nextChunk).
	firstChunk = 16 << 10
)

// requestMemory is the budget of a server's request buffers in flight, from
// the first byte of a frame's body until its response is written: Kafka's
// queued.max.request.bytes, the memory pool of Kafka's SocketServer. A
// connection whose frame needs more than the budget has left waits, its
// reads paused, as Kafka mutes channels while its pool is depleted. Kafka's
// pool is not strict (a request is allocated whenever any memory is left, so
// it overdraws by at most one request); here the budget is strict except for
// one frame at a time, the overdraft, which may grow past it: a frame's
// buffer grows as its bytes arrive, so without it frames half read could
// hold the whole budget and wait for each other forever. Either way the
// bytes in flight stay under the budget plus one request (plus, here, the
// small frames that never wait: firstChunk per connection at most).
type requestMemory struct {
	limit   int64 // <= 0: unbounded, only counted
	pools   [maxClassShift - minClassShift + 1]sync.Pool
	waited  prometheus.Counter // set once metrics exist
	mu      sync.Mutex
	used    int64
	waiters int
	// overdraft is the frame allowed past the limit.
	overdraft *frameBuf
	// freed is closed and replaced when memory is released while someone waits.
	freed chan struct{}
}

func newRequestMemory(limit int64) *requestMemory {
	return &requestMemory{limit: limit, freed: make(chan struct{})}
}

// frameBuf is one connection's request buffer: the frame read so far (len)
// in a buffer of cap bytes, charged to the budget.
type frameBuf struct {
	b       []byte
	charged int64
}

func (m *requestMemory) inUse() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// waiting is the number of frames waiting for the budget.
func (m *requestMemory) waiting() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiters
}

func (m *requestMemory) available() float64 {
	if m.limit <= 0 {
		return math.Inf(1)
	}
	return float64(m.limit - m.inUse())
}

// grow replaces fb's buffer with one of at least n bytes holding the same
// filled bytes, waiting for the budget first unless small (then it is
// charged at once). It gives up when ctx ends or deadline passes (the
// connection's read deadline), with an error that is a timeout in the
// latter case.
func (m *requestMemory) grow(ctx context.Context, fb *frameBuf, n int, small bool, deadline time.Time) error {
	size := classSize(n)
	if small {
		m.charge(fb, int64(size))
	} else if err := m.reserve(ctx, fb, int64(size), deadline); err != nil {
		return err
	}
	nb := m.alloc(size)[:len(fb.b)]
	copy(nb, fb.b)
	old := fb.b
	fb.b = nb
	if cap(old) > 0 {
		m.free(old)
		m.uncharge(fb, int64(cap(old)))
	}
	return nil
}

// release returns fb's buffer, to the pool when reuse is true (nothing can
// still refer to it), and its charge to the budget.
func (m *requestMemory) release(fb *frameBuf, reuse bool) {
	if reuse && cap(fb.b) > 0 {
		m.free(fb.b)
	}
	fb.b = nil
	m.mu.Lock()
	m.used -= fb.charged
	fb.charged = 0
	if m.overdraft == fb {
		m.overdraft = nil
	}
	m.wakeLocked()
	m.mu.Unlock()
}

// charge counts n bytes against fb without waiting.
func (m *requestMemory) charge(fb *frameBuf, n int64) {
	m.mu.Lock()
	m.used += n
	fb.charged += n
	m.mu.Unlock()
}

func (m *requestMemory) uncharge(fb *frameBuf, n int64) {
	m.mu.Lock()
	m.used -= n
	fb.charged -= n
	m.wakeLocked()
	m.mu.Unlock()
}

func (m *requestMemory) wakeLocked() {
	if m.waiters > 0 {
		close(m.freed)
		m.freed = make(chan struct{})
	}
}

// reserve charges n bytes to fb, waiting while the budget has no room and
// another frame holds the overdraft.
func (m *requestMemory) reserve(ctx context.Context, fb *frameBuf, n int64, deadline time.Time) error {
	m.mu.Lock()
	for {
		if m.limit <= 0 || m.used+n <= m.limit || m.overdraft == fb {
			break
		}
		if m.overdraft == nil {
			m.overdraft = fb
			break
		}
		freed := m.freed
		m.waiters++
		m.mu.Unlock()
		err := m.wait(ctx, freed, deadline)
		m.mu.Lock()
		m.waiters--
		if err != nil {
			m.mu.Unlock()
			return err
		}
	}
	m.used += n
	fb.charged += n
	m.mu.Unlock()
	return nil
}

func (m *requestMemory) wait(ctx context.Context, freed <-chan struct{}, deadline time.Time) error {
	start := time.Now()
	if m.waited != nil {
		defer func() { m.waited.Add(time.Since(start).Seconds()) }()
	}
	// Network deadlines are on real time, as the read deadline this is.
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-freed:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for request memory: %w", ctx.Err())
	case <-timer.C:
		return fmt.Errorf("waiting for request memory: %w", os.ErrDeadlineExceeded)
	}
}

// classSize is the size of the buffer that holds n bytes: its size class,
// or n itself outside the classes (a small frame is not worth a pooled
// buffer: most are requests whose buffers cannot be reused).
func classSize(n int) int {
	if n < 1<<minClassShift || n > 1<<maxClassShift {
		return n
	}
	return 1 << classShift(n)
}

func classShift(n int) int {
	return max(minClassShift, bits.Len(uint(n-1)))
}

func (m *requestMemory) alloc(size int) []byte {
	if size < 1<<minClassShift || size > 1<<maxClassShift {
		return make([]byte, size)
	}
	if p, ok := m.pools[classShift(size)-minClassShift].Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, size)
}

// free puts b back in its class's pool; buffers of no class are dropped.
func (m *requestMemory) free(b []byte) {
	c := cap(b)
	if c > 1<<maxClassShift || c < 1<<minClassShift || c&(c-1) != 0 {
		return
	}
	b = b[:0]
	m.pools[classShift(c)-minClassShift].Put(&b)
}
