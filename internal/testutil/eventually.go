// Package testutil holds helpers shared by tests. It imports nothing of
// ours, so any test may use it.
package testutil

import (
	"fmt"
	"testing"
	"time"
)

// maxPoll caps the pause between two checks: short enough that a test
// notices a condition soon, long enough not to hammer a server process.
const maxPoll = 100 * time.Millisecond

// Eventually checks cond until it holds, pausing 1 ms at first and doubling
// up to 100 ms, and fails t with the message if it still does not hold after
// timeout. It must be called from the test's goroutine.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	EventuallyNoError(t, timeout, func() error {
		if cond() {
			return nil
		}
		return notYet{}
	}, format, args...)
}

// EventuallyNoError calls fn until it returns nil, as Eventually does, and
// fails t with the message and fn's last error after timeout.
func EventuallyNoError(t testing.TB, timeout time.Duration, fn func() error, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		err := fn()
		if err == nil {
			return
		}
		if !time.Now().Before(deadline) {
			msg := fmt.Sprintf(format, args...)
			if _, ok := err.(notYet); ok {
				t.Fatalf("%s: not reached within %v", msg, timeout)
			}
			t.Fatalf("%s: still failing after %v: %v", msg, timeout, err)
		}
		time.Sleep(pause) // the poll interval, not a settle wait
		pause = min(2*pause, maxPoll)
	}
}

// notYet is Eventually's error for a condition that does not hold yet.
type notYet struct{}

func (notYet) Error() string { return "condition does not hold" }
