package testutil

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the message and ends the
// calling goroutine, as testing's does.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on its own goroutine and returns the failure
// message, empty when f passed.
func run(t *testing.T, f func(tb testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.msg
}

func TestEventually(t *testing.T) {
	var calls atomic.Int32
	cases := []struct {
		name    string
		check   func(tb testing.TB)
		wantMsg string // substring of the failure, "" for a pass
	}{
		{"holds at once", func(tb testing.TB) {
			Eventually(tb, time.Second, func() bool { return true }, "never")
		}, ""},
		{"holds after a few checks", func(tb testing.TB) {
			Eventually(tb, 5*time.Second, func() bool { return calls.Add(1) >= 3 }, "three calls")
		}, ""},
		{"never holds", func(tb testing.TB) {
			Eventually(tb, 20*time.Millisecond, func() bool { return false }, "leader of %s", "t-0")
		}, "leader of t-0: not reached within 20ms"},
		{"error clears", func(tb testing.TB) {
			n := 0
			EventuallyNoError(tb, 5*time.Second, func() error {
				if n++; n < 3 {
					return errors.New("not yet")
				}
				return nil
			}, "clears")
		}, ""},
		{"error stays", func(tb testing.TB) {
			EventuallyNoError(tb, 20*time.Millisecond, func() error { return errors.New("broker 2 fenced") }, "join")
		}, "join: still failing after 20ms: broker 2 fenced"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := run(t, c.check)
			switch {
			case c.wantMsg == "" && msg != "":
				t.Fatalf("failed: %s", msg)
			case c.wantMsg != "" && !strings.Contains(msg, c.wantMsg):
				t.Fatalf("failure %q, want it to contain %q", msg, c.wantMsg)
			}
		})
	}
}
