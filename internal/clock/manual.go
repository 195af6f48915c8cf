package clock

import (
	"slices"
	"sync"
	"time"
)

// Manual is a clock that moves only when told to. It is safe for concurrent
// use.
//
// Its timers and tickers fire when Advance or Set moves the clock to or past
// their deadline, in deadline order, before Advance or Set returns: a channel
// receives the clock's new time (a buffer of one, so an unread value is never
// doubled), and an AfterFunc's f runs on the goroutine that called Advance or
// Set, so a test sees its effect as soon as the call returns. A ticker fires
// at most once per Advance or Set however many periods it crosses, as a real
// ticker drops the ticks a slow receiver misses; its next deadline stays on
// its original schedule. A timer made or reset with d <= 0 fires at once (an
// AfterFunc's f then runs on a new goroutine, as its caller may hold locks f
// takes). Moving the clock back fires nothing.
type Manual struct {
	mu  sync.Mutex
	now time.Time
	// waiters are the active timers and tickers, in the order they were armed.
	waiters []*manualTimer
	// changed is closed (and replaced) whenever waiters changes, for BlockUntil.
	changed chan struct{}
}

// NewManual returns a manual clock set to start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now returns the clock's current time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d and fires what falls due.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	m.moveLocked(m.now.Add(d))
}

// Set moves the clock to t and fires what falls due.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	m.moveLocked(t)
}

// Waiters returns how many timers and tickers are armed on the clock.
func (m *Manual) Waiters() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters)
}

// BlockUntil returns once at least n timers and tickers are armed on the
// clock, so a test can advance it after the goroutines under test wait on it
// instead of sleeping first.
func (m *Manual) BlockUntil(n int) {
	for {
		m.mu.Lock()
		if len(m.waiters) >= n {
			m.mu.Unlock()
			return
		}
		if m.changed == nil {
			m.changed = make(chan struct{})
		}
		ch := m.changed
		m.mu.Unlock()
		<-ch
	}
}

// NewTimer returns a timer that fires once the clock reaches now+d.
func (m *Manual) NewTimer(d time.Duration) Timer {
	t := &manualTimer{m: m, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// AfterFunc returns a timer that calls f once the clock reaches now+d.
func (m *Manual) AfterFunc(d time.Duration, f func()) Timer {
	t := &manualTimer{m: m, fn: f}
	t.Reset(d)
	return t
}

// NewTicker returns a ticker that fires every d of the clock's time.
func (m *Manual) NewTicker(d time.Duration) Ticker {
	t := &manualTicker{manualTimer{m: m, ch: make(chan time.Time, 1)}}
	t.Reset(d)
	return t
}

// moveLocked sets the time, fires the waiters due and unlocks m; the
// AfterFunc functions run after the unlock, so they may use the clock.
func (m *Manual) moveLocked(t time.Time) {
	m.now = t
	var due []*manualTimer
	for _, w := range m.waiters {
		if !w.deadline.After(t) {
			due = append(due, w)
		}
	}
	slices.SortStableFunc(due, func(a, b *manualTimer) int { return a.deadline.Compare(b.deadline) })
	var fns []func()
	for _, w := range due {
		if w.period > 0 {
			// Skip the periods crossed: one tick per move.
			w.deadline = w.deadline.Add(w.period * (t.Sub(w.deadline)/w.period + 1))
		} else {
			m.removeLocked(w)
		}
		if w.fn != nil {
			fns = append(fns, w.fn)
			continue
		}
		w.send(t)
	}
	m.mu.Unlock()
	for _, f := range fns {
		f()
	}
}

func (m *Manual) removeLocked(w *manualTimer) bool {
	i := slices.Index(m.waiters, w)
	if i < 0 {
		return false
	}
	m.waiters = slices.Delete(m.waiters, i, i+1)
	m.notifyLocked()
	return true
}

func (m *Manual) notifyLocked() {
	if m.changed != nil {
		close(m.changed)
		m.changed = nil
	}
}

// manualTimer is a timer, an AfterFunc (fn set) or, with a period, the core
// of a ticker. Its deadline and period are guarded by m.mu.
type manualTimer struct {
	m        *Manual
	ch       chan time.Time
	fn       func()
	deadline time.Time
	period   time.Duration
}

func (t *manualTimer) C() <-chan time.Time { return t.ch }

func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	t.drain()
	return t.m.removeLocked(t)
}

func (t *manualTimer) Reset(d time.Duration) bool { return t.reset(d, 0) }

// reset arms the timer d from now; a period makes it a ticker's.
func (t *manualTimer) reset(d, period time.Duration) bool {
	m := t.m
	m.mu.Lock()
	defer m.mu.Unlock()
	t.drain()
	active := m.removeLocked(t)
	t.period = period
	if d <= 0 {
		t.fire(m.now)
		return active
	}
	t.deadline = m.now.Add(d)
	m.waiters = append(m.waiters, t)
	m.notifyLocked()
	return active
}

// fire handles a timer due at once: its send, or f on its own goroutine.
func (t *manualTimer) fire(now time.Time) {
	if t.fn != nil {
		go t.fn()
		return
	}
	t.send(now)
}

func (t *manualTimer) send(now time.Time) {
	select {
	case t.ch <- now:
	default:
	}
}

// drain drops an unread value so none is seen after Stop or Reset.
func (t *manualTimer) drain() {
	if t.ch == nil {
		return
	}
	select {
	case <-t.ch:
	default:
	}
}

type manualTicker struct{ t manualTimer }

func (k *manualTicker) C() <-chan time.Time { return k.t.ch }

func (k *manualTicker) Stop() { k.t.Stop() }

func (k *manualTicker) Reset(d time.Duration) {
	if d <= 0 {
		panic("clock: non-positive interval for Ticker")
	}
	k.t.reset(d, d)
}
