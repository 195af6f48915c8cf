package cli

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Waits between attempts while a group coordinator is not ready: short at
// first (a fresh server creates __consumer_offsets within a second or so),
// then no more often than once a second.
const (
	coordinatorFirstWait = 100 * time.Millisecond
	coordinatorMaxWait   = time.Second
)

// coordinatorNotReady reports whether err says the group coordinator cannot
// answer yet but will: __consumer_offsets is being created, its partition is
// loading, or the coordinator moved. Kafka answers the first group request
// on a fresh cluster with COORDINATOR_NOT_AVAILABLE, and its own tools retry.
func coordinatorNotReady(err error) bool {
	return errors.Is(err, kerr.CoordinatorNotAvailable) ||
		errors.Is(err, kerr.CoordinatorLoadInProgress) ||
		errors.Is(err, kerr.NotCoordinator)
}

// retryCoordinator calls call until neither its error nor notReady(result)
// says the coordinator is not ready, or ctx ends (the command's --timeout).
// notReady finds per-group errors inside a result; nil means only the error
// is looked at. When ctx ends first, the last result and error are returned,
// so the command reports the coordinator error rather than a bare timeout.
func retryCoordinator[T any](ctx context.Context, call func() (T, error), notReady func(T) bool) (T, error) {
	wait := coordinatorFirstWait
	for {
		result, err := call()
		if !coordinatorNotReady(err) && (notReady == nil || !notReady(result)) {
			return result, err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return result, err
		case <-timer.C:
		}
		wait = min(2*wait, coordinatorMaxWait)
	}
}
