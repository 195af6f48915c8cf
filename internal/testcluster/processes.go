package testcluster

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testbin"
)

// Processes is a cluster of real `sluice server` processes, one per node of
// a Layout, started from a binary the test built. Kill sends SIGKILL, Stop
// SIGTERM; Start brings a node back on its dirs and ports.
type Processes struct {
	t      testing.TB
	binary string
	Layout *Layout
	procs  []*testbin.Process
	// proxies carry inter-node traffic with Options.ProxyInterBroker.
	proxies *nodeProxies
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
	p := &Processes{t: t, binary: binary, Layout: layout, procs: make([]*testbin.Process, len(layout.Nodes))}
	t.Cleanup(func() {
		for i := range p.procs {
			if p.procs[i] != nil {
				p.Kill(i)
			}
		}
	})
	if opts.ProxyInterBroker {
		p.proxies = newNodeProxies(t, layout)
	}
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
	if p.proxies != nil {
		p.proxies.rewrite(i, props)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"server"}
	for _, k := range keys {
		args = append(args, "--override", k+"="+props[k])
	}
	// StartProcess logs the node's output if the test fails.
	p.procs[i] = testbin.StartProcess(p.t, fmt.Sprintf("node %d", p.Layout.Nodes[i].ID), p.binary, args...)
	if p.proxies != nil {
		p.proxies.started(i, p.procs[i].Pid())
	}
}

// AwaitStarted waits until node i has logged that it serves.
func (p *Processes) AwaitStarted(i int, timeout time.Duration) {
	p.t.Helper()
	pr := p.procs[i]
	deadline := time.Now().Add(timeout)
	for !strings.Contains(pr.Logs(), `msg="node started"`) {
		if exited, err := pr.Exited(); exited {
			p.t.Fatalf("node %d exited while starting: %v\n%s", i+1, err, pr.Logs())
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
	if err := pr.Kill(); err != nil {
		p.t.Errorf("kill node %d: %v", i+1, err)
	}
}

// Stop sends SIGTERM to node i and waits for a clean exit.
func (p *Processes) Stop(i int) {
	p.t.Helper()
	pr := p.procs[i]
	if pr == nil {
		return
	}
	p.procs[i] = nil
	if err := pr.Stop(40 * time.Second); err != nil {
		p.t.Errorf("stop node %d: %v", i+1, err)
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
	return p.procs[i].Logs()
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
	return p.procs[i].Pid()
}
