package clock

import (
	"sync/atomic"
	"testing"
	"time"
)

var start = time.Unix(1_700_000_000, 0)

// fired reports whether c holds a value, without waiting.
func fired(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestManualTimer(t *testing.T) {
	cases := []struct {
		name string
		// run drives a 10s timer and reports whether it fired.
		run  func(m *Manual, tm Timer) bool
		want bool
	}{
		{"before the deadline", func(m *Manual, tm Timer) bool { m.Advance(9 * time.Second); return fired(tm.C()) }, false},
		{"at the deadline", func(m *Manual, tm Timer) bool { m.Advance(10 * time.Second); return fired(tm.C()) }, true},
		{"Set past the deadline", func(m *Manual, tm Timer) bool { m.Set(start.Add(time.Hour)); return fired(tm.C()) }, true},
		{"moving back", func(m *Manual, tm Timer) bool { m.Set(start.Add(-time.Hour)); return fired(tm.C()) }, false},
		{"stopped", func(m *Manual, tm Timer) bool {
			if !tm.Stop() {
				t.Error("Stop of an active timer returned false")
			}
			m.Advance(time.Minute)
			return fired(tm.C())
		}, false},
		{"reset later", func(m *Manual, tm Timer) bool {
			m.Advance(5 * time.Second)
			if !tm.Reset(10 * time.Second) {
				t.Error("Reset of an active timer returned false")
			}
			m.Advance(9 * time.Second)
			return fired(tm.C())
		}, false},
		{"reset after firing", func(m *Manual, tm Timer) bool {
			m.Advance(10 * time.Second)
			if tm.Reset(time.Second) {
				t.Error("Reset of a fired timer returned true")
			}
			// Go 1.23 semantics: the unread first value is gone.
			if fired(tm.C()) {
				t.Error("stale value after Reset")
			}
			m.Advance(time.Second)
			return fired(tm.C())
		}, true},
		{"fires once", func(m *Manual, tm Timer) bool {
			m.Advance(10 * time.Second)
			<-tm.C()
			m.Advance(time.Hour)
			return fired(tm.C())
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewManual(start)
			tm := m.NewTimer(10 * time.Second)
			if got := c.run(m, tm); got != c.want {
				t.Fatalf("fired = %v, want %v", got, c.want)
			}
		})
	}
}

func TestManualTimerValueAndZeroDuration(t *testing.T) {
	m := NewManual(start)
	tm := m.NewTimer(time.Second)
	m.Advance(3 * time.Second)
	if got := <-tm.C(); !got.Equal(start.Add(3 * time.Second)) {
		t.Fatalf("timer sent %v, want the clock's new time", got)
	}
	if !fired(m.NewTimer(0).C()) {
		t.Fatal("a zero timer did not fire at once")
	}
	if m.Waiters() != 0 {
		t.Fatalf("%d waiters after every timer fired", m.Waiters())
	}
}

func TestManualTicker(t *testing.T) {
	cases := []struct {
		name     string
		advances []time.Duration
		ticks    int // ticks seen, reading after each advance
	}{
		{"none before the period", []time.Duration{999 * time.Millisecond}, 0},
		{"one per period", []time.Duration{time.Second, time.Second, time.Second}, 3},
		{"one per advance crossing many", []time.Duration{10 * time.Second}, 1},
		{"schedule kept", []time.Duration{1500 * time.Millisecond, 500 * time.Millisecond}, 2},
		{"half periods", []time.Duration{500 * time.Millisecond, 400 * time.Millisecond, 200 * time.Millisecond}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := NewManual(start)
			tk := m.NewTicker(time.Second)
			defer tk.Stop()
			n := 0
			for _, d := range c.advances {
				m.Advance(d)
				if fired(tk.C()) {
					n++
				}
			}
			if n != c.ticks {
				t.Fatalf("%d ticks, want %d", n, c.ticks)
			}
		})
	}
}

func TestManualTickerStopAndReset(t *testing.T) {
	m := NewManual(start)
	tk := m.NewTicker(time.Second)
	tk.Reset(5 * time.Second)
	m.Advance(4 * time.Second)
	if fired(tk.C()) {
		t.Fatal("ticked on the old period after Reset")
	}
	m.Advance(time.Second)
	if !fired(tk.C()) {
		t.Fatal("no tick at the new period")
	}
	tk.Stop()
	m.Advance(time.Minute)
	if fired(tk.C()) || m.Waiters() != 0 {
		t.Fatalf("stopped ticker ticked or still waits (%d waiters)", m.Waiters())
	}
}

func TestManualAfterFunc(t *testing.T) {
	m := NewManual(start)
	var order []int
	m.AfterFunc(2*time.Second, func() { order = append(order, 2) })
	m.AfterFunc(time.Second, func() {
		order = append(order, 1)
		// f may use the clock: Advance runs it unlocked.
		m.AfterFunc(time.Second, func() { order = append(order, 3) })
	})
	stopped := m.AfterFunc(time.Second, func() { t.Error("stopped AfterFunc ran") })
	if stopped.C() != nil {
		t.Error("AfterFunc timer has a channel")
	}
	if !stopped.Stop() {
		t.Error("Stop of an armed AfterFunc returned false")
	}
	m.Advance(2 * time.Second) // runs 1 then 2; 3 is armed at +3s
	if len(order) != 2 || order[0] != 1 || order[1] != 2 {
		t.Fatalf("ran %v after 2s, want [1 2]", order)
	}
	m.Advance(time.Second)
	if len(order) != 3 || order[2] != 3 {
		t.Fatalf("ran %v after 3s, want [1 2 3]", order)
	}

	var ran atomic.Bool
	done := make(chan struct{})
	m.AfterFunc(0, func() { ran.Store(true); close(done) })
	<-done // a zero AfterFunc runs at once on its own goroutine
	if !ran.Load() {
		t.Fatal("zero AfterFunc did not run")
	}
}

func TestManualBlockUntil(t *testing.T) {
	m := NewManual(start)
	got := make(chan time.Time)
	for range 3 {
		go func() {
			tm := m.NewTimer(time.Minute)
			got <- <-tm.C()
		}()
	}
	m.BlockUntil(3) // all three wait: advancing now cannot miss one
	if n := m.Waiters(); n != 3 {
		t.Fatalf("Waiters = %d, want 3", n)
	}
	m.Advance(time.Minute)
	for range 3 {
		if v := <-got; !v.Equal(start.Add(time.Minute)) {
			t.Fatalf("timer sent %v", v)
		}
	}
	m.BlockUntil(0)
}

func TestSinceUntil(t *testing.T) {
	m := NewManual(start)
	m.Advance(time.Minute)
	if d := Since(m, start); d != time.Minute {
		t.Fatalf("Since = %v", d)
	}
	if d := Until(m, start.Add(time.Hour)); d != 59*time.Minute {
		t.Fatalf("Until = %v", d)
	}
}

// TestReal checks the wrappers reach the time package; the waits are short
// real durations because that is what is under test.
func TestReal(t *testing.T) {
	var c Clock = Real{}
	tm := c.NewTimer(time.Millisecond)
	<-tm.C()
	if tm.Stop() {
		t.Fatal("Stop of a fired timer returned true")
	}
	tk := c.NewTicker(time.Millisecond)
	<-tk.C()
	<-tk.C()
	tk.Reset(2 * time.Millisecond)
	<-tk.C()
	tk.Stop()
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
	if !c.AfterFunc(time.Hour, func() {}).Stop() {
		t.Fatal("Stop of an armed AfterFunc returned false")
	}
	if Since(c, time.Now().Add(-time.Hour)) < time.Hour {
		t.Fatal("Since on the real clock")
	}
}
