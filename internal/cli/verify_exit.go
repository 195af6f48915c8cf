package cli

import "errors"

// The exit statuses a command may ask for beyond 1 (`sluice verify`'s: 1
// is kept for "anomalies found", so a run without a verdict must differ).
const (
	ExitAnomalies  = 1
	ExitIncomplete = 2
)

// exitError is an error with the process exit status it calls for.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the exit status for an error a command returned: the one it
// asked for, else 1.
func ExitCode(err error) int {
	if e, ok := errors.AsType[*exitError](err); ok {
		return e.code
	}
	return 1
}
