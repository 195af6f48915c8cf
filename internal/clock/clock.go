// Package clock puts time behind an interface so tests can drive it by hand:
// Real wraps the time package, Manual moves and fires its timers only when a
// test tells it to.
package clock

import "time"

// Clock is the source of time for every Sluice component: the current time
// and the timers that wait on it. Network deadlines stay on real time.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed, as time.NewTimer.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that sends the time every d, as
	// time.NewTicker; d must be positive.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f once d has passed, as time.AfterFunc; the returned
	// timer's C is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a one-shot timer with time.Timer's Go 1.23 semantics: after Stop
// or Reset returns, no stale time is received from C.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was active.
	Stop() bool
	// Reset makes the timer fire d from now; it reports whether it was active.
	Reset(d time.Duration) bool
}

// Ticker sends the time at every period until stopped.
type Ticker interface {
	C() <-chan time.Time
	Stop()
	// Reset stops the ticker and restarts it with period d.
	Reset(d time.Duration)
}

// Since is time.Since on c.
func Since(c Clock, t time.Time) time.Duration { return c.Now().Sub(t) }

// Until is time.Until on c.
func Until(c Clock, t time.Time) time.Duration { return t.Sub(c.Now()) }

// Real reads the system clock and runs the time package's timers.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewTicker wraps time.NewTicker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) Timer { return realTimer{time.AfterFunc(d, f)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time        { return r.t.C }
func (r realTimer) Stop() bool                 { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time   { return r.t.C }
func (r realTicker) Stop()                 { r.t.Stop() }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }
