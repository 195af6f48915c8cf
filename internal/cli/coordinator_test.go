package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// freshBroker starts a server of its own for one test: the shared one has
// long since created __consumer_offsets.
func freshBroker(t *testing.T) string {
	t.Helper()
	if os.Getenv(testBrokersEnv) != "" {
		t.Skip(testBrokersEnv + " is set: the test needs a server that has never served a group")
	}
	s := &testServer{}
	t.Cleanup(s.stop)
	return s.broker(t)
}

// The first group request on a new server is answered COORDINATOR_NOT_AVAILABLE
// while __consumer_offsets is created; the commands wait for it.
func TestGroupCommandsWaitForCoordinatorOnFreshServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	t.Run("reset-offsets --execute", func(t *testing.T) {
		addr := freshBroker(t)
		b := []string{"--brokers", addr}
		mustRun(t, "", append([]string{"topic", "create", "fresh", "-p", "2"}, b...)...)
		mustRun(t, "x\nx\n", append([]string{"produce", "fresh", "--partition", "0"}, b...)...)
		mustRun(t, "", append([]string{"group", "reset-offsets", "fresh-g", "--topic", "fresh", "--to-latest", "--execute"}, b...)...)
		out := mustRun(t, "", append([]string{"group", "describe", "fresh-g"}, b...)...)
		if !strings.Contains(out, "fresh  0          2") {
			t.Fatalf("describe after the reset does not show partition 0 committed at 2:\n%s", out)
		}
	})
	t.Run("describe", func(t *testing.T) {
		addr := freshBroker(t)
		_, err := runCLI(t, "", "group", "describe", "never-joined", "--brokers", addr)
		// With a ready coordinator, a group that never existed is GROUP_ID_NOT_FOUND.
		if !errors.Is(err, kerr.GroupIDNotFound) {
			t.Fatalf("describe of an unknown group on a fresh server: %v, want GROUP_ID_NOT_FOUND", err)
		}
	})
}

func TestRetryCoordinatorStopsAtTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	calls := 0
	_, err := retryCoordinator(ctx, func() (int, error) {
		calls++
		return 0, kerr.CoordinatorLoadInProgress
	}, nil)
	if !errors.Is(err, kerr.CoordinatorLoadInProgress) {
		t.Fatalf("err %v, want the last coordinator error", err)
	}
	if calls < 2 || ctx.Err() == nil {
		t.Fatalf("%d calls, context %v: want retries until the deadline", calls, ctx.Err())
	}
}

func TestRetryCoordinatorRetriesOnlyCoordinatorErrors(t *testing.T) {
	ctx := context.Background()
	calls := 0
	got, err := retryCoordinator(ctx, func() (int, error) {
		calls++
		switch calls {
		case 1:
			return 0, kerr.NotCoordinator
		case 2:
			return 1, nil // notReady says the result still holds a coordinator error
		default:
			return calls, kerr.UnknownTopicOrPartition
		}
	}, func(n int) bool { return n == 1 })
	if got != 3 || !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("got %d, %v after %d calls; want 3, UNKNOWN_TOPIC_OR_PARTITION", got, err, calls)
	}
}
