package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// target is a system under test as the workloads see it: one broker or a cluster of
// several nodes, started fresh by a session (empty data dirs, free ports) and closed by it.
type target interface {
	System() system
	// Start formats fresh data dirs, starts every node and returns once the cluster
	// answers and lists all its brokers.
	Start(ctx context.Context) error
	// Bootstrap is the comma-separated list of every node's client listener.
	Bootstrap() string
	// Nodes is how many nodes serve; topics are created with that replication factor.
	Nodes() int
	// PIDs are the node processes (JVMs for Kafka), for /proc figures summed over them.
	PIDs() []int
	// Close ends whatever is still running and removes the data.
	Close() error
}

// broker is one single-node system under test. Besides the target methods it may be
// stopped, killed and relaunched on the same data to time start-up.
type broker interface {
	target
	// PID is the broker process (the JVM for Kafka), for /proc figures.
	PID() int
	DataDir() string
	// Stop asks the process to shut down cleanly (SIGTERM) and waits for it to exit.
	Stop(ctx context.Context) error
	// Kill sends SIGKILL and waits for the process to be gone.
	Kill(ctx context.Context) error
	// Relaunch starts the process again on the same data dir and ports, without waiting.
	Relaunch() error
}

// proc is a broker process, either our child (cmd set, reaped by a goroutine that closes
// done) or one started by someone else (kafka-ref), which is polled.
type proc struct {
	pid  int
	cmd  *exec.Cmd
	done chan struct{}
}

// startProc launches argv with output appended to logPath. The returned proc's goroutine
// (its owner is the proc: it ends when the process exits) reaps the child.
func startProc(argv []string, logPath string, extraEnv []string) (*proc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open broker log: %w", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), extraEnv...)
	// Its own process group, so a Ctrl-C of the suite reaches the suite first and the
	// broker is stopped by Close, not half-killed by the terminal.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p := &proc{pid: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func foreignProc(pid int) *proc { return &proc{pid: pid} }

func (p *proc) exited() bool {
	if p.cmd != nil {
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	}
	return !processAlive(p.pid)
}

// wait blocks until the process has exited or ctx ends.
func (p *proc) wait(ctx context.Context) error {
	if p.cmd != nil {
		select {
		case <-p.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("pid %d still running: %w", p.pid, ctx.Err())
		}
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for processAlive(p.pid) {
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("pid %d still running: %w", p.pid, ctx.Err())
		}
	}
	return nil
}

// terminate sends SIGTERM and waits up to grace, then SIGKILL.
func (p *proc) terminate(grace time.Duration) error {
	if p.exited() {
		return nil
	}
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("SIGTERM pid %d: %w", p.pid, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if p.wait(ctx) == nil {
		return nil
	}
	return p.kill(context.Background())
}

func (p *proc) kill(ctx context.Context) error {
	if err := syscall.Kill(p.pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("SIGKILL pid %d: %w", p.pid, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return p.wait(ctx)
}

// freePorts returns n distinct ports free on 127.0.0.1 right now.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitAPIVersions polls the broker until ApiVersions answers without error, or fails when
// the process exits or ctx ends.
func waitAPIVersions(ctx context.Context, addr string, p *proc) (*kmsg.ApiVersionsResponse, error) {
	for {
		if p != nil && p.exited() {
			return nil, fmt.Errorf("broker process %d exited during start-up", p.pid)
		}
		resp, err := apiVersions(ctx, addr)
		if err == nil {
			return resp, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("broker at %s not answering ApiVersions: %w (last error: %v)", addr, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func apiVersions(ctx context.Context, addr string) (*kmsg.ApiVersionsResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0))
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName = "sluice-bench-compare"
	req.ClientSoftwareVersion = "1"
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	if resp.ErrorCode != 0 {
		return nil, fmt.Errorf("ApiVersions error code %d", resp.ErrorCode)
	}
	return resp, nil
}

// segmentBytes sums the sizes of the log segment files (*.log) under dir: the log a
// restart may have to recover. Index files are left out: both systems preallocate them
// sparsely, so their apparent size says nothing.
func segmentBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(path, ".log") {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of %s: %w", dir, err)
	}
	return total, nil
}

// signalTerm asks a broker process to shut down cleanly.
func signalTerm(p *proc) error {
	if p == nil {
		return fmt.Errorf("broker not started")
	}
	if err := syscall.Kill(p.pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("SIGTERM pid %d: %w", p.pid, err)
	}
	return nil
}
