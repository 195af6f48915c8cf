package testcluster

import (
	"bytes"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Processes is a cluster of real `sluice server` processes, one per node of
// a Layout, started from a binary the test built. Kill sends SIGKILL, Stop
// SIGTERM; Start brings a node back on its dirs and ports.
type Processes struct {
	t      testing.TB
	binary string
	Layout *Layout
	procs  []*process
}

type process struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

// syncBuffer collects a process's output; the process writes it while the
// test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// StartProcesses formats a layout (see Options) and starts one process per
// node; it waits until every node serves. Every process is
// killed at the end of the test, and their logs are printed if it failed.
func StartProcesses(t testing.TB, binary string, opts Options) *Processes {
	t.Helper()
	layout, err := NewLayout(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	p := &Processes{t: t, binary: binary, Layout: layout, procs: make([]*process, len(layout.Nodes))}
	t.Cleanup(func() {
		for i := range p.procs {
			if p.procs[i] != nil {
				p.Kill(i)
			}
		}
	})
	for i := range layout.Nodes {
		p.launch(i)
	}
	for i := range layout.Nodes {
		p.AwaitStarted(i, 60*time.Second)
	}
	return p
}

func (p *Processes) launch(i int) {
	p.t.Helper()
	props := p.Layout.Properties(i)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"server"}
	for _, k := range keys {
		args = append(args, "--override", k+"="+props[k])
	}
	pr := &process{cmd: exec.Command(p.binary, args...), logs: &syncBuffer{}, done: make(chan error, 1)}
	pr.cmd.Stdout, pr.cmd.Stderr = pr.logs, pr.logs
	if err := pr.cmd.Start(); err != nil {
		p.t.Fatalf("start node %d: %v", i+1, err)
	}
	go func() { pr.done <- pr.cmd.Wait() }()
	p.procs[i] = pr
	logs := pr.logs
	id := p.Layout.Nodes[i].ID
	p.t.Cleanup(func() {
		if p.t.Failed() {
			p.t.Logf("node %d log:\n%s", id, logs.String())
		}
	})
}

// AwaitStarted waits until node i has logged that it serves.
func (p *Processes) AwaitStarted(i int, timeout time.Duration) {
	p.t.Helper()
	pr := p.procs[i]
	deadline := time.Now().Add(timeout)
	for !strings.Contains(pr.logs.String(), `msg="node started"`) {
		select {
		case err := <-pr.done:
			pr.done <- err
			p.t.Fatalf("node %d exited while starting: %v\n%s", i+1, err, pr.logs.String())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("node %d not started after %s", i+1, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill sends SIGKILL to node i and waits until it is gone.
func (p *Processes) Kill(i int) {
	p.t.Helper()
	pr := p.procs[i]
	if pr == nil {
		return
	}
	p.procs[i] = nil
	if err := pr.cmd.Process.Kill(); err != nil {
		p.t.Errorf("kill node %d: %v", i+1, err)
	}
	<-pr.done
}

// Stop sends SIGTERM to node i and waits for a clean exit.
func (p *Processes) Stop(i int) {
	p.t.Helper()
	pr := p.procs[i]
	if pr == nil {
		return
	}
	p.procs[i] = nil
	if err := pr.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatalf("stop node %d: %v", i+1, err)
	}
	select {
	case err := <-pr.done:
		if err != nil {
			p.t.Errorf("node %d exited with %v after SIGTERM", i+1, err)
		}
	case <-time.After(40 * time.Second):
		pr.cmd.Process.Kill()
		<-pr.done
		p.t.Errorf("node %d still running 40s after SIGTERM", i+1)
	}
}

// Start starts a stopped or killed node i again and waits until it serves.
func (p *Processes) Start(i int) {
	p.t.Helper()
	if p.procs[i] != nil {
		p.t.Fatalf("node %d is running", i+1)
	}
	p.launch(i)
	p.AwaitStarted(i, 60*time.Second)
}

// Running reports whether node i's process is running.
func (p *Processes) Running(i int) bool { return p.procs[i] != nil }

// Logs is node i's output so far (empty when it is not running).
func (p *Processes) Logs(i int) string {
	if p.procs[i] == nil {
		return ""
	}
	return p.procs[i].logs.String()
}

// String names the layout for failure messages.
func (p *Processes) String() string {
	return fmt.Sprintf("cluster %s (%s)", p.Layout.ClusterID, p.Layout.Voters())
}

// StartAll starts every stopped node at once and waits until all serve: a
// quorum needs a majority up before any node can finish starting.
func (p *Processes) StartAll() {
	p.t.Helper()
	var started []int
	for i := range p.procs {
		if p.procs[i] == nil {
			p.launch(i)
			started = append(started, i)
		}
	}
	for _, i := range started {
		p.AwaitStarted(i, 60*time.Second)
	}
}

// Pid is node i's process id, or 0 when it is not running.
func (p *Processes) Pid(i int) int {
	if p.procs[i] == nil {
		return 0
	}
	return p.procs[i].cmd.Process.Pid
}
