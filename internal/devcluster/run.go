package devcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/vfs"
)

// readyPoll is how often /readyz is asked while the nodes start.
const readyPoll = 200 * time.Millisecond

// Cluster is a planned dev cluster; Run starts and supervises it.
type Cluster struct {
	opts  Options
	nodes []Node
}

// New checks opts and lays the cluster out; nothing starts yet.
func New(opts Options) (*Cluster, error) {
	nodes, err := plan(opts)
	if err != nil {
		return nil, err
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.ReadyTimeout <= 0 {
		opts.ReadyTimeout = 60 * time.Second
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = 60 * time.Second
	}
	return &Cluster{opts: opts, nodes: nodes}, nil
}

// Nodes is the cluster's layout.
func (c *Cluster) Nodes() []Node { return c.nodes }

// BootstrapServers is every node's client address, comma-separated.
func (c *Cluster) BootstrapServers() string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.ClientAddr
	}
	return strings.Join(addrs, ",")
}

// child is one running node process.
type child struct {
	node  Node
	cmd   *exec.Cmd
	alive bool
}

// exit is a child's end, as its Wait returned.
type exit struct {
	i   int
	err error
}

// Run formats the nodes, starts them, waits until all are ready and then
// until ctx ends (Ctrl-C) or a node exits; either way it stops every node
// still running. It returns nil after a stop asked for through ctx, and an
// error naming the node when one failed to start, to become ready or kept
// running.
func (c *Cluster) Run(ctx context.Context) error {
	if err := checkPorts(c.nodes, c.opts.Console); err != nil {
		return err
	}
	id, err := prepare(vfs.Default, c.opts.Dir, c.nodes)
	if err != nil {
		return err
	}
	out := c.opts.Out
	fmt.Fprintf(out, "dev cluster: %d combined nodes (broker,controller), cluster id %s, data in %s\n", len(c.nodes), id, c.opts.Dir)
	exits := make(chan exit, len(c.nodes))
	children, err := c.startAll(exits)
	if err == nil {
		c.printLayout(children)
		start := c.opts.Clock.Now()
		if err = c.awaitReady(ctx, children, exits); err == nil && ctx.Err() == nil {
			fmt.Fprintf(out, "ready in %.1fs: the quorum has a leader and all %d brokers are registered (Ctrl-C stops the cluster)\n",
				clock.Since(c.opts.Clock, start).Seconds(), len(c.nodes))
			err = c.watch(ctx, children, exits)
		}
	}
	return errors.Join(err, c.stop(children, exits))
}

func (c *Cluster) startAll(exits chan<- exit) ([]*child, error) {
	children := make([]*child, 0, len(c.nodes))
	for i, n := range c.nodes {
		ch, err := c.start(i, n, exits)
		if err != nil {
			return children, err
		}
		children = append(children, ch)
	}
	return children, nil
}

// start runs node n with its output appended to its log file.
func (c *Cluster) start(i int, n Node, exits chan<- exit) (*child, error) {
	logFile, err := os.OpenFile(n.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("node %d's log: %w", n.ID, err)
	}
	// The child holds its own descriptor; ours is not needed after Start.
	defer logFile.Close()
	cmd := exec.Command(c.opts.Binary, args(c.nodes, n, c.opts)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start node %d: %w", n.ID, err)
	}
	go func() { exits <- exit{i: i, err: cmd.Wait()} }()
	return &child{node: n, cmd: cmd, alive: true}, nil
}

func (c *Cluster) printLayout(children []*child) {
	out := c.opts.Out
	for _, ch := range children {
		n := ch.node
		fmt.Fprintf(out, "node %d: pid %d, client %s, controller %s, metrics http://%s/metrics, log %s\n",
			n.ID, ch.cmd.Process.Pid, n.ClientAddr, n.ControllerAddr, n.MetricsAddr, n.LogFile)
	}
	if c.opts.Console != "" {
		fmt.Fprintf(out, "console: http://%s/ (node 1)\n", c.opts.Console)
	}
	fmt.Fprintf(out, "bootstrap servers: %s\n", c.BootstrapServers())
}

// awaitReady polls every node's /readyz until all answer 200 (the quorum
// has a leader, the broker is registered, unfenced and caught up).
func (c *Cluster) awaitReady(ctx context.Context, children []*child, exits <-chan exit) error {
	ticker := c.opts.Clock.NewTicker(readyPoll)
	defer ticker.Stop()
	deadline := c.opts.Clock.NewTimer(c.opts.ReadyTimeout)
	defer deadline.Stop()
	httpc := &http.Client{Timeout: time.Second}
	ready := make([]bool, len(children))
	var notReady string
	for {
		notReady = ""
		for i, ch := range children {
			if !ready[i] {
				ready[i], notReady = probe(ctx, httpc, ch.node, notReady)
			}
		}
		if notReady == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case e := <-exits:
			return c.exited(ctx, children, e)
		case <-deadline.C():
			return fmt.Errorf("not ready after %s:%s", c.opts.ReadyTimeout, notReady)
		case <-ticker.C():
		}
	}
}

// probe asks n's /readyz; when not ready it appends why to notReady.
func probe(ctx context.Context, httpc *http.Client, n Node, notReady string) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+n.MetricsAddr+"/readyz", nil)
	if err != nil {
		return false, fmt.Sprintf("%s\nnode %d: %v", notReady, n.ID, err)
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return false, fmt.Sprintf("%s\nnode %d: %v", notReady, n.ID, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return true, notReady
	}
	return false, fmt.Sprintf("%s\nnode %d: %s", notReady, n.ID, strings.TrimSpace(string(body)))
}

// watch waits for the stop or for a node to exit on its own.
func (c *Cluster) watch(ctx context.Context, children []*child, exits <-chan exit) error {
	select {
	case <-ctx.Done():
		return nil
	case e := <-exits:
		return c.exited(ctx, children, e)
	}
}

// exited handles a node's exit seen before the stop: an error unless the
// stop was asked for (Ctrl-C reaches the children too, and one may be
// quicker than us).
func (c *Cluster) exited(ctx context.Context, children []*child, e exit) error {
	if ctx.Err() != nil {
		children[e.i].alive = false
		c.reportStopped(children[e.i], e.err)
		return nil
	}
	return c.died(children, e)
}

// died reports a node that exited by itself, with the end of its log.
func (c *Cluster) died(children []*child, e exit) error {
	ch := children[e.i]
	ch.alive = false
	status := "exit status 0"
	if e.err != nil {
		status = e.err.Error()
	}
	fmt.Fprintf(c.opts.Out, "node %d (pid %d) exited: %s; the end of %s:\n%s", ch.node.ID, ch.cmd.Process.Pid, status, ch.node.LogFile, tail(ch.node.LogFile, 15))
	return fmt.Errorf("node %d exited: %s (log %s)", ch.node.ID, status, ch.node.LogFile)
}

// stop sends SIGTERM to every running node and waits for them; a node
// still running after StopTimeout is killed. The error names the nodes that
// did not exit cleanly.
func (c *Cluster) stop(children []*child, exits <-chan exit) error {
	running := 0
	for _, ch := range children {
		if ch.alive {
			running++
			_ = ch.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	if running == 0 {
		return nil
	}
	fmt.Fprintf(c.opts.Out, "stopping %d nodes\n", running)
	deadline := c.opts.Clock.NewTimer(c.opts.StopTimeout)
	defer deadline.Stop()
	var errs []error
	for running > 0 {
		select {
		case e := <-exits:
			running--
			children[e.i].alive = false
			if e.err != nil {
				errs = append(errs, fmt.Errorf("node %d: %w", children[e.i].node.ID, e.err))
			}
			c.reportStopped(children[e.i], e.err)
		case <-deadline.C():
			for _, ch := range children {
				if ch.alive {
					fmt.Fprintf(c.opts.Out, "node %d (pid %d) still running %s after SIGTERM: killing it\n", ch.node.ID, ch.cmd.Process.Pid, c.opts.StopTimeout)
					_ = ch.cmd.Process.Kill()
					errs = append(errs, fmt.Errorf("node %d killed after %s", ch.node.ID, c.opts.StopTimeout))
				}
			}
		}
	}
	fmt.Fprintln(c.opts.Out, "stopped")
	return errors.Join(errs...)
}

func (c *Cluster) reportStopped(ch *child, err error) {
	if err != nil {
		fmt.Fprintf(c.opts.Out, "node %d (pid %d) stopped: %v (log %s)\n", ch.node.ID, ch.cmd.Process.Pid, err, ch.node.LogFile)
		return
	}
	fmt.Fprintf(c.opts.Out, "node %d (pid %d) stopped\n", ch.node.ID, ch.cmd.Process.Pid)
}

// tail is the last n lines of a file, indented, for a failure report.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "  (" + err.Error() + ")\n"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}
