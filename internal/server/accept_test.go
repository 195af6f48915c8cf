package server

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// failingListener fails the accepts whose numbers (from 1) are in fail,
// with their errors, and accepts for real otherwise.
type failingListener struct {
	net.Listener
	fail  map[int32]error
	calls atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if err := l.fail[l.calls.Add(1)]; err != nil {
		return nil, err
	}
	return l.Listener.Accept()
}

// waitPaused waits until the acceptor pauses on clk.
func waitPaused(t *testing.T, clk *clock.Manual) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, func() bool { return clk.Waiters() == 1 }, "acceptor did not pause after a failed accept")
}

func acceptError(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

// startFailingServer starts a server whose listener fails the accepts in
// fail, on a manual clock, logging to the returned buffer.
func startFailingServer(t *testing.T, fail map[int32]error) (*testServer, *failingListener, *clock.Manual, *testbin.SyncBuffer) {
	t.Helper()
	clk := clock.NewManual(time.Unix(1000, 0))
	logs := &testbin.SyncBuffer{}
	fl := &failingListener{fail: fail}
	ts := startServerWith(t, func(o *Options) {
		o.Clock = clk
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}, func(s *Server) {
		s.listen = func(network, address string) (net.Listener, error) {
			ln, err := net.Listen(network, address)
			fl.Listener = ln
			return fl, err
		}
	})
	return ts, fl, clk, logs
}

// An accept that fails for want of file descriptors, kernel buffers or
// memory is retried after 5 ms, then 10, 20 ... (net/http's backoff), each
// failure counted and logged, and the listener serves once accept works.
func TestAcceptErrorsAreRetriedWithBackoff(t *testing.T) {
	ts, fl, clk, logs := startFailingServer(t, map[int32]error{
		1: acceptError(syscall.EMFILE), 2: acceptError(syscall.ENFILE), 3: acceptError(syscall.ENOBUFS), 4: acceptError(syscall.ENOMEM),
	})
	for i, wait := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		waitPaused(t, clk)
		if got := fl.calls.Load(); got != int32(i+1) {
			t.Fatalf("after failure %d: %d accepts, want %d", i+1, got, i+1)
		}
		clk.Advance(wait - time.Millisecond)
		if clk.Waiters() != 1 || fl.calls.Load() != int32(i+1) {
			t.Fatalf("failure %d: retried before its %s pause ended", i+1, wait)
		}
		clk.Advance(time.Millisecond)
	}
	c := dial(t, ts.addr)
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 7)
	if corr, _ := readResponse(t, c, false); corr != 7 {
		t.Fatalf("correlation %d, want 7", corr)
	}
	for _, kind := range []string{"EMFILE", "ENFILE", "ENOBUFS", "ENOMEM"} {
		if got := counterValue(t, ts.srv.metrics.acceptErrors.WithLabelValues("PLAINTEXT", kind)); got != 1 {
			t.Errorf("sluice_acceptor_errors_total{error=%s} = %v, want 1", kind, got)
		}
	}
	if n := strings.Count(logs.String(), "accept failed; retrying"); n != 4 {
		t.Fatalf("%d accept warnings logged, want 4:\n%s", n, logs.String())
	}
}

// The pause doubles up to 1 s and no further.
func TestAcceptBackoffStopsAtOneSecond(t *testing.T) {
	fail := map[int32]error{}
	for i := range int32(10) {
		fail[i+1] = acceptError(syscall.EMFILE)
	}
	_, fl, clk, _ := startFailingServer(t, fail)
	wait := 5 * time.Millisecond
	for i := range 10 {
		waitPaused(t, clk)
		clk.Advance(min(wait, time.Second) - time.Millisecond)
		if fl.calls.Load() != int32(i+1) {
			t.Fatalf("failure %d retried before %s", i+1, min(wait, time.Second))
		}
		clk.Advance(time.Millisecond)
		wait *= 2
	}
}

// A connection that ends wakes an acceptor paused after EMFILE: the file
// descriptor it released may be the one accept lacked.
func TestReleasedConnectionWakesPausedAcceptor(t *testing.T) {
	ts, _, clk, _ := startFailingServer(t, map[int32]error{2: acceptError(syscall.EMFILE)})
	held := dial(t, ts.addr)
	send(t, held, kmsg.NewPtrApiVersionsRequest(), 3, 1)
	readResponse(t, held, false)
	waitPaused(t, clk) // the second accept failed: paused for 5 ms of a clock that does not move
	c := dial(t, ts.addr)
	held.Close()
	send(t, c, kmsg.NewPtrApiVersionsRequest(), 3, 2)
	if corr, _ := readResponse(t, c, false); corr != 2 {
		t.Fatalf("correlation %d, want 2", corr)
	}
}

// Shutdown ends an acceptor's pause at once.
func TestShutdownEndsAcceptPause(t *testing.T) {
	ts, _, clk, _ := startFailingServer(t, map[int32]error{1: acceptError(syscall.EMFILE)})
	waitPaused(t, clk)
	stopped := make(chan error, 1)
	go func() { stopped <- shutdownNow(ts.srv) }()
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown waited for the acceptor's pause")
	}
}

func TestAcceptErrorKinds(t *testing.T) {
	for want, err := range map[string]error{
		"EMFILE":       acceptError(syscall.EMFILE),
		"ENFILE":       acceptError(syscall.ENFILE),
		"ECONNABORTED": acceptError(syscall.ECONNABORTED),
		"timeout":      &net.OpError{Op: "accept", Err: os.ErrDeadlineExceeded},
		"other":        errors.New("something else"),
	} {
		if got := acceptErrorKind(err); got != want {
			t.Errorf("acceptErrorKind(%v) = %q, want %q", err, got, want)
		}
	}
}
