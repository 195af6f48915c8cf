// Package purgatory parks requests that must wait for a condition: an acks=all
// produce waiting for the high watermark to pass its batches, a fetch long
// poll waiting for min.bytes to arrive. Each waiter watches one or more keys
// (topic partitions); whoever changes the state behind a key calls Notify and
// the waiters of that key re-check their condition. A waiter whose condition
// does not hold by its deadline expires.
//
// Unlike Kafka's DelayedOperationPurgatory, completion work runs on the
// waiting goroutine (the connection's reader, which blocks on the request as
// Kafka's one-request-in-flight rule allows), so Notify never runs a
// condition on the notifier's goroutine and cannot stall an append.
//
// Deadlines are kept in one heap served by one timer goroutine that the
// Purgatory owns and Close stops, rather than a runtime timer per waiter.
// Deadlines are read from a clock.Clock, so a test can expire waiters by
// moving a manual clock.
package purgatory

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
)

// ErrClosed is returned by Wait when the purgatory is closed while waiting.
var ErrClosed = errors.New("purgatory: closed")

// Purgatory parks waiters keyed by K. It is safe for concurrent use.
type Purgatory[K comparable] struct {
	mu struct {
		sync.Mutex
		watchers  map[K]map[*waiter]struct{}
		deadlines deadlineHeap
		closed    bool
	}
	clk clock.Clock
	// kick wakes the timer goroutine when an earlier deadline arrives.
	kick chan struct{}
	stop chan struct{}
	done chan struct{}
}

// waiter is one parked Wait call.
type waiter struct {
	// wake is signalled (non-blocking, capacity 1) by Notify, so a
	// notification that arrives between a check and the sleep is not lost.
	wake chan struct{}
	// expired is closed by the timer goroutine at the deadline.
	expired  chan struct{}
	deadline time.Time
	// heapIndex is the waiter's position in the deadline heap, -1 when out.
	heapIndex int
}

// Option configures a Purgatory.
type Option func(*options)

type options struct{ clock clock.Clock }

// WithClock makes the purgatory time its deadlines on c; the default is
// clock.Real.
func WithClock(c clock.Clock) Option { return func(o *options) { o.clock = c } }

// New starts a purgatory and its timer goroutine; Close stops it.
func New[K comparable](opts ...Option) *Purgatory[K] {
	o := options{clock: clock.Real{}}
	for _, opt := range opts {
		opt(&o)
	}
	p := &Purgatory[K]{
		clk:  o.clock,
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	p.mu.watchers = make(map[K]map[*waiter]struct{})
	go p.runTimers()
	return p
}

// Close stops the timer goroutine and wakes every waiter with ErrClosed.
// It is idempotent.
func (p *Purgatory[K]) Close() {
	p.mu.Lock()
	if p.mu.closed {
		p.mu.Unlock()
		<-p.done
		return
	}
	p.mu.closed = true
	p.mu.Unlock()
	close(p.stop)
	<-p.done
}

// Wait returns when ready reports true (true, nil), when timeout passes first
// (false, nil), or when ctx ends or the purgatory closes (false, error).
// ready is called on the caller's goroutine: first before anything is
// registered (an acks=all produce on a single replica, or a fetch with data
// waiting, returns without allocating a waiter), then once after the waiter
// is registered (so no Notify can be missed), after each Notify of one of
// keys, and once more at the deadline. It must not block; it may record what
// it saw for the caller to use.
func (p *Purgatory[K]) Wait(ctx context.Context, keys []K, timeout time.Duration, ready func() bool) (bool, error) {
	if ok := ready(); ok || timeout <= 0 {
		return ok, nil
	}
	w := &waiter{
		wake:      make(chan struct{}, 1),
		expired:   make(chan struct{}),
		deadline:  p.clk.Now().Add(timeout),
		heapIndex: -1,
	}
	// Parked from before the waiter is visible, so a test that moves a
	// manual clock once it sees the waiter finds the wait begun.
	Park(ctx)
	defer Unpark(ctx)
	if err := p.register(w, keys); err != nil {
		return false, err
	}
	defer p.unregister(w, keys)
	if ready() {
		return true, nil
	}
	for {
		select {
		case <-w.wake:
			if ready() {
				return true, nil
			}
		case <-w.expired:
			// One last look: the condition may have become true just now.
			return ready(), nil
		case <-ctx.Done():
			return false, ctx.Err()
		case <-p.stop:
			return false, ErrClosed
		}
	}
}

// Notify tells the waiters watching key to re-check their condition.
func (p *Purgatory[K]) Notify(key K) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := range p.mu.watchers[key] {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// Watching returns how many waiters watch key (metrics, tests).
func (p *Purgatory[K]) Watching(key K) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.watchers[key])
}

// Waiting returns how many waiters are parked (metrics, tests).
func (p *Purgatory[K]) Waiting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.deadlines.Len()
}

func (p *Purgatory[K]) register(w *waiter, keys []K) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed {
		return ErrClosed
	}
	for _, k := range keys {
		set := p.mu.watchers[k]
		if set == nil {
			set = make(map[*waiter]struct{})
			p.mu.watchers[k] = set
		}
		set[w] = struct{}{}
	}
	heap.Push(&p.mu.deadlines, w)
	if w.heapIndex == 0 {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
	return nil
}

func (p *Purgatory[K]) unregister(w *waiter, keys []K) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range keys {
		set := p.mu.watchers[k]
		delete(set, w)
		if len(set) == 0 {
			delete(p.mu.watchers, k)
		}
	}
	if w.heapIndex >= 0 {
		heap.Remove(&p.mu.deadlines, w.heapIndex)
	}
}

// runTimers expires waiters at their deadlines. It sleeps until the earliest
// deadline, or until register kicks it for an earlier one.
func (p *Purgatory[K]) runTimers() {
	defer close(p.done)
	timer := p.clk.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := p.expireDue(p.clk.Now())
		if next > 0 {
			timer.Reset(next)
		} else {
			timer.Reset(time.Hour)
		}
		select {
		case <-timer.C():
		case <-p.kick:
		case <-p.stop:
			return
		}
	}
}

// expireDue closes the expired channel of every waiter whose deadline is at
// or before now and returns the time until the next deadline (0: none).
func (p *Purgatory[K]) expireDue(now time.Time) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.mu.deadlines.Len() > 0 {
		w := p.mu.deadlines[0]
		if w.deadline.After(now) {
			return w.deadline.Sub(now)
		}
		heap.Pop(&p.mu.deadlines)
		close(w.expired)
	}
	return 0
}

// deadlineHeap orders waiters by deadline, earliest first.
type deadlineHeap []*waiter

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex = i
	h[j].heapIndex = j
}

func (h *deadlineHeap) Push(x any) {
	w := x.(*waiter)
	w.heapIndex = len(*h)
	*h = append(*h, w)
}

func (h *deadlineHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	w.heapIndex = -1
	return w
}
