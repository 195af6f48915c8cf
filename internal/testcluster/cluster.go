// Package testcluster starts Sluice clusters for tests: N combined nodes
// in this process (Start), each with its own log dir and listeners on free
// ports of 127.0.0.1, or as real `sluice` processes (StartProcesses) that
// can be killed with SIGKILL and restarted. The quorum is static
// (controller.quorum.voters lists every node) and the dirs are formatted
// with one cluster id, as `sluice storage format` does.
package testcluster

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/node"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Options shape a cluster.
type Options struct {
	// Nodes is the number of combined nodes (voters); default 3 when
	// Brokers is zero.
	Nodes int
	// Controllers and Brokers, when Brokers is set, make a cluster of
	// dedicated controllers (voters, ids 1..Controllers) and dedicated
	// brokers (observers, the next ids) instead of combined nodes.
	Controllers, Brokers int
	// Overrides are server.properties keys set on every node.
	Overrides map[string]string
	// Logger receives every node's log; nil discards it.
	Logger *slog.Logger
	// ProxyInterBroker (StartProcesses only) routes traffic between nodes
	// (CONTROLLER listeners and an INTERNAL inter-broker listener) through
	// a fault-injecting proxy, so Processes.Cut can cut a node off its
	// peers while clients still reach it directly on PLAINTEXT.
	ProxyInterBroker bool
}

// Layout is a cluster's fixed shape: ids, ports and dirs of every node.
type Layout struct {
	ClusterID string
	Dir       string
	Nodes     []NodeLayout
	Overrides map[string]string
}

// NodeLayout is one node's id, roles, listeners and log dir.
type NodeLayout struct {
	ID int32
	// Roles is process.roles: "broker,controller", "controller" or "broker".
	Roles          string
	BrokerAddr     string
	ControllerAddr string
	LogDir         string
}

// NewLayout draws free ports and a cluster id and formats every node's dir.
func NewLayout(dir string, opts Options) (*Layout, error) {
	nodes := opts.Nodes
	roles := func(int) string { return "broker,controller" }
	if opts.Brokers > 0 {
		controllers := max(opts.Controllers, 1)
		nodes = controllers + opts.Brokers
		roles = func(i int) string {
			if i < controllers {
				return "controller"
			}
			return "broker"
		}
	} else if nodes <= 0 {
		nodes = 3
	}
	overrides := opts.Overrides
	id, err := kafka.RandomUUID()
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(2 * nodes)
	if err != nil {
		return nil, err
	}
	l := &Layout{ClusterID: id.String(), Dir: dir, Overrides: overrides}
	for i := range nodes {
		nl := NodeLayout{
			ID:             int32(i + 1),
			Roles:          roles(i),
			BrokerAddr:     fmt.Sprintf("127.0.0.1:%d", ports[2*i]),
			ControllerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
			LogDir:         filepath.Join(dir, fmt.Sprintf("node-%d", i+1)),
		}
		if err := logdir.Format(vfs.Default, []string{nl.LogDir}, l.ClusterID, nl.ID, false); err != nil {
			return nil, fmt.Errorf("format node %d: %w", nl.ID, err)
		}
		l.Nodes = append(l.Nodes, nl)
	}
	return l, nil
}

// IsController reports whether node i is a voter.
func (n NodeLayout) IsController() bool { return strings.Contains(n.Roles, "controller") }

// IsBroker reports whether node i serves clients.
func (n NodeLayout) IsBroker() bool { return strings.Contains(n.Roles, "broker") }

// Voters is controller.quorum.voters of the layout.
func (l *Layout) Voters() string {
	var parts []string
	for _, n := range l.Nodes {
		if n.IsController() {
			parts = append(parts, fmt.Sprintf("%d@%s", n.ID, n.ControllerAddr))
		}
	}
	return strings.Join(parts, ",")
}

// Properties are node i's server.properties keys.
func (l *Layout) Properties(i int) map[string]string {
	n := l.Nodes[i]
	props := map[string]string{
		"process.roles":                    n.Roles,
		"node.id":                          fmt.Sprint(n.ID),
		"controller.quorum.voters":         l.Voters(),
		"controller.listener.names":        "CONTROLLER",
		"listener.security.protocol.map":   "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs":                         n.LogDir,
		"offsets.topic.replication.factor": "1",
	}
	switch {
	case n.IsBroker() && n.IsController():
		props["listeners"] = "PLAINTEXT://" + n.BrokerAddr + ",CONTROLLER://" + n.ControllerAddr
		props["advertised.listeners"] = "PLAINTEXT://" + n.BrokerAddr
	case n.IsController():
		props["listeners"] = "CONTROLLER://" + n.ControllerAddr
	default:
		props["listeners"] = "PLAINTEXT://" + n.BrokerAddr
		props["advertised.listeners"] = "PLAINTEXT://" + n.BrokerAddr
	}
	for k, v := range l.Overrides {
		props[k] = v
	}
	return props
}

// BrokerAddrs are the broker listener addresses of the nodes that are
// brokers.
func (l *Layout) BrokerAddrs() []string {
	var out []string
	for _, n := range l.Nodes {
		if n.IsBroker() {
			out = append(out, n.BrokerAddr)
		}
	}
	return out
}

// freePorts finds n distinct free ports (testbin.FreePorts: below the
// ephemeral range, so a restarted node gets its port back).
func freePorts(n int) ([]int, error) { return testbin.FreePorts(n) }

// Cluster is N combined nodes in this process.
type Cluster struct {
	t      testing.TB
	log    *slog.Logger
	Layout *Layout
	nodes  []*member
}

type member struct {
	node *node.Node
	stop context.CancelFunc
	done chan error
}

// Start formats and starts an in-process cluster and waits until every
// node serves; the cluster stops at the end of the test.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.ProxyInterBroker {
		// In one process the proxy cannot tell which node opened a connection.
		t.Fatal("testcluster: ProxyInterBroker needs StartProcesses")
	}
	layout, err := NewLayout(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Cluster{t: t, log: log, Layout: layout, nodes: make([]*member, len(layout.Nodes))}
	t.Cleanup(c.StopAll)
	for i := range layout.Nodes {
		c.launch(i)
	}
	for i := range layout.Nodes {
		c.AwaitReady(i, 60*time.Second)
	}
	return c
}

func (c *Cluster) launch(i int) {
	c.t.Helper()
	cfg, err := config.Parse("", c.Layout.Properties(i))
	if err != nil {
		c.t.Fatalf("node %d config: %v", i+1, err)
	}
	n, err := node.New(cfg, c.log.With("node", i+1), nil)
	if err != nil {
		c.t.Fatalf("node %d: %v", i+1, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{node: n, stop: cancel, done: make(chan error, 1)}
	go func() { m.done <- n.Run(ctx) }()
	c.nodes[i] = m
}

// AwaitReady waits until node i serves clients.
func (c *Cluster) AwaitReady(i int, timeout time.Duration) {
	c.t.Helper()
	m := c.nodes[i]
	select {
	case <-m.node.Ready():
	case err := <-m.done:
		c.t.Fatalf("node %d stopped while starting: %v", i+1, err)
	case <-time.After(timeout):
		c.t.Fatalf("node %d not ready after %s", i+1, timeout)
	}
}

// Node returns node i (0-based), or nil when it is stopped.
func (c *Cluster) Node(i int) *node.Node {
	if c.nodes[i] == nil {
		return nil
	}
	return c.nodes[i].node
}

// Stop stops node i cleanly (controlled shutdown) and waits for it.
func (c *Cluster) Stop(i int) {
	c.t.Helper()
	m := c.nodes[i]
	if m == nil {
		return
	}
	c.nodes[i] = nil
	m.stop()
	if err := <-m.done; err != nil {
		c.t.Errorf("node %d stopped with: %v", i+1, err)
	}
}

// Restart starts a stopped node i again and waits until it serves.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	if c.nodes[i] != nil {
		c.t.Fatalf("node %d is running", i+1)
	}
	c.launch(i)
	c.AwaitReady(i, 60*time.Second)
}

// StopAll stops every running node.
func (c *Cluster) StopAll() {
	for i := range c.nodes {
		c.Stop(i)
	}
}

// ActiveController returns the index of the running node that leads the
// quorum, waiting up to timeout for one.
func (c *Cluster) ActiveController(timeout time.Duration) int {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for i, m := range c.nodes {
			if m != nil && m.node.IsActiveController() {
				return i
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no active controller after %s", timeout)
	return -1
}

// RunningBrokerAddrs are the broker addresses of the running nodes.
func (c *Cluster) RunningBrokerAddrs() []string {
	var out []string
	for i, m := range c.nodes {
		if m != nil {
			out = append(out, c.Layout.Nodes[i].BrokerAddr)
		}
	}
	sort.Strings(out)
	return out
}
