package records

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// DefaultDecompressionBudget is the default of
// sluice.decompression.max.inflight.bytes: twice the per-batch cap, so two
// batches at the cap (or many ordinary ones) decompress at once.
const DefaultDecompressionBudget = 2 * DefaultMaxUncompressedBytes

// Budget bounds the decompressed bytes held at once by every decoder that
// shares it: a broker-wide semaphore, FIFO like golang.org/x/sync's weighted
// semaphore. A holder never waits for more while holding some (each batch
// takes its whole reservation at once, see decompress), so the waits always
// end. A nil *Budget is no budget: every reservation is granted at once.
type Budget struct {
	size int64

	mu      sync.Mutex
	used    int64
	peak    int64
	waiters list.List // of *budgetWaiter, oldest first
}

type budgetWaiter struct {
	n     int64
	ready chan struct{} // closed when the reservation is granted
}

// BudgetSize reads sluice.decompression.max.inflight.bytes as the node's
// configuration holds it (its raw value and whether it is set): unset is
// DefaultDecompressionBudget; a value must be a positive byte count.
func BudgetSize(raw string, set bool) (int64, error) {
	if !set {
		return DefaultDecompressionBudget, nil
	}
	v, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err == nil && v <= 0 {
		err = errors.New("must be a positive number of bytes")
	}
	if err != nil {
		return 0, fmt.Errorf("sluice.decompression.max.inflight.bytes %q: %w", raw, err)
	}
	return v, nil
}

// NewBudget returns a budget of size bytes; size <= 0 means the default.
func NewBudget(size int64) *Budget {
	if size <= 0 {
		size = DefaultDecompressionBudget
	}
	return &Budget{size: size}
}

// Size is the budget's capacity in bytes.
func (b *Budget) Size() int64 {
	if b == nil {
		return 0
	}
	return b.size
}

// InUse returns the bytes reserved now and the most ever reserved at once.
func (b *Budget) InUse() (now, peak int64) {
	if b == nil {
		return 0, 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.peak
}

// acquire reserves n bytes (at most the budget's size, so one batch larger
// than the whole budget still runs, alone), waiting in FIFO order until they
// are free or ctx ends. It returns what was reserved, for release.
func (b *Budget) acquire(ctx context.Context, n int64) (int64, error) {
	if b == nil || n <= 0 {
		return 0, nil
	}
	n = min(n, b.size)
	b.mu.Lock()
	if b.used+n <= b.size && b.waiters.Len() == 0 {
		b.grantLocked(n)
		b.mu.Unlock()
		return n, nil
	}
	w := &budgetWaiter{n: n, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return n, nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready:
			// Granted while the context ended: give it back.
			b.releaseLocked(n)
		default:
			front := b.waiters.Front() == elem
			b.waiters.Remove(elem)
			if front {
				// Waiters queued behind this one may fit now.
				b.notifyLocked()
			}
		}
		b.mu.Unlock()
		return 0, fmt.Errorf("waiting for %d bytes of the decompression budget: %w", n, ctx.Err())
	}
}

// release returns n bytes reserved by acquire.
func (b *Budget) release(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.releaseLocked(n)
	b.mu.Unlock()
}

func (b *Budget) grantLocked(n int64) {
	b.used += n
	b.peak = max(b.peak, b.used)
}

func (b *Budget) releaseLocked(n int64) {
	b.used -= n
	if b.used < 0 {
		panic("records: decompression budget released more than it reserved")
	}
	b.notifyLocked()
}

// notifyLocked grants waiters in order while the oldest fits.
func (b *Budget) notifyLocked() {
	for {
		front := b.waiters.Front()
		if front == nil {
			return
		}
		w := front.Value.(*budgetWaiter)
		if b.used+w.n > b.size {
			return
		}
		b.grantLocked(w.n)
		b.waiters.Remove(front)
		close(w.ready)
	}
}
