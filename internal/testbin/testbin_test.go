package testbin

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testutil"
)

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := FreePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: want 5 distinct positive ports", ports)
		}
		seen[p] = true
	}
}

// The trap is set before the output the test waits for, so SIGTERM never
// comes before it (it did once under load).
func TestProcessStopReportsExitAndLogs(t *testing.T) {
	p := StartProcess(t, "sh", "/bin/sh", "-c", "trap 'exit 3' TERM; echo hello; while :; do sleep 0.05; done")
	testutil.EventuallyNoError(t, 10*time.Second, func() error {
		if logs := p.Logs(); !strings.Contains(logs, "hello") {
			return fmt.Errorf("collected %q", logs)
		}
		return nil
	}, "no output collected")
	if err := p.Stop(10 * time.Second); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Stop of a process exiting 3 on SIGTERM = %v, want exit status 3", err)
	}
	if exited, _ := p.Exited(); !exited {
		t.Fatal("Exited false after Stop")
	}
}

func TestProcessKill(t *testing.T) {
	p := StartProcess(t, "sleep", "/bin/sleep", "60")
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	exited, err := p.Exited()
	if !exited || err == nil {
		t.Fatalf("after Kill: exited=%v err=%v, want exited by a signal", exited, err)
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("second Kill: %v", err)
	}
}

func TestWaitForAPIVersionsGivesUp(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := WaitForAPIVersions(ctx, addr); err == nil {
		t.Fatal("nothing listens, yet WaitForAPIVersions succeeded")
	}
}

func TestServerStartsAnswersAndStops(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the sluice binary")
	}
	bin := Build(t)
	if again := Build(t); again != bin {
		t.Fatalf("second Build = %s, want the cached %s", again, bin)
	}
	s := StartServer(t, bin, ServerConfig{DataDir: t.TempDir()})
	if err := WaitForAPIVersions(context.Background(), s.Addr()); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(30 * time.Second); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.Logs())
	}
}
