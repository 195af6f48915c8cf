package devcluster

import (
	"context"
	"errors"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// freeLayout finds a base port and a metrics base port whose whole ranges
// are free now.
func freeLayout(t *testing.T, nodes int) (base, metrics int) {
	t.Helper()
	for range 50 {
		ports, err := testbin.FreePorts(2)
		if err != nil {
			t.Fatal(err)
		}
		base, metrics = ports[0], ports[1]
		n, err := plan(Options{Nodes: nodes, BasePort: base, MetricsBasePort: metrics, Dir: t.TempDir()})
		if err == nil && checkPorts(n, "") == nil {
			return base, metrics
		}
	}
	t.Fatal("no free port ranges")
	return 0, 0
}

type running struct {
	out  *testbin.SyncBuffer
	stop context.CancelFunc
	done chan error
}

func startCluster(t *testing.T, nodes int) (*Cluster, *running) {
	t.Helper()
	base, metrics := freeLayout(t, nodes)
	r := &running{out: &testbin.SyncBuffer{}, done: make(chan error, 1)}
	c, err := New(Options{Nodes: nodes, Binary: testbin.Build(t), Dir: t.TempDir(), BasePort: base, MetricsBasePort: metrics, Out: r.out, StopTimeout: 40 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	r.stop = stop
	go func() { r.done <- c.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		<-r.done
		if t.Failed() {
			t.Logf("dev cluster output:\n%s", r.out)
		}
	})
	testutil.Eventually(t, 90*time.Second, func() bool {
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("Run returned before ready: %v\n%s", err, r.out)
		default:
		}
		return strings.Contains(r.out.String(), "ready in ")
	}, "the dev cluster says ready")
	return c, r
}

// pids reads the node pids from the printed layout.
func pids(t *testing.T, out string) []int {
	t.Helper()
	var ps []int
	for _, m := range regexp.MustCompile(`(?m)^node \d+: pid (\d+),`).FindAllStringSubmatch(out, -1) {
		p, _ := strconv.Atoi(m[1])
		ps = append(ps, p)
	}
	return ps
}

func gone(pid int) bool {
	// The parent reaped its children, so the pid no longer exists.
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestRunReadyAndStop(t *testing.T) {
	c, r := startCluster(t, 3)
	out := r.out.String()
	ps := pids(t, out)
	if len(ps) != 3 || !strings.Contains(out, "bootstrap servers: "+c.BootstrapServers()) {
		t.Fatalf("output lacks the pids or the bootstrap servers:\n%s", out)
	}
	for _, n := range c.Nodes() {
		conn, err := net.Dial("tcp", n.ClientAddr)
		if err != nil {
			t.Fatalf("node %d's client listener: %v", n.ID, err)
		}
		conn.Close()
	}
	r.stop()
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run after the stop: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after the stop")
	}
	r.done <- nil // for the cleanup
	for _, p := range ps {
		if !gone(p) {
			t.Errorf("node pid %d still running after the stop", p)
		}
	}
	if !strings.Contains(r.out.String(), "stopped\n") {
		t.Errorf("no final stopped line:\n%s", r.out)
	}
	for _, n := range c.Nodes() {
		if _, err := os.Stat(n.LogFile); err != nil {
			t.Errorf("node %d's log: %v", n.ID, err)
		}
	}
}

func TestRunNodeDeathStopsTheRest(t *testing.T) {
	_, r := startCluster(t, 2)
	ps := pids(t, r.out.String())
	if len(ps) != 2 {
		t.Fatalf("pids %v", ps)
	}
	if err := syscall.Kill(ps[1], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-r.done:
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after a node died")
	}
	r.done <- err
	if err == nil || !strings.Contains(err.Error(), "node 2 exited: signal: killed") {
		t.Fatalf("Run's error: %v", err)
	}
	if !strings.Contains(r.out.String(), "node 2 (pid "+strconv.Itoa(ps[1])+") exited: signal: killed") || !gone(ps[0]) {
		t.Fatalf("node 1 not stopped or the death not reported:\n%s", r.out)
	}
}
