// Package cluster starts the cluster `sluice verify` tests when it is given
// none: N combined (broker and controller) nodes as child processes of the
// sluice binary on free ports of 127.0.0.1, formatted with one cluster id
// and a static quorum of every node. Traffic between the nodes (the
// controller listeners and an INTERNAL inter-broker listener) goes through
// a netfault proxy so links can be cut; clients reach every node directly.
// The faults it offers (kill, terminate, pause, cut links, clock jumps in
// fault builds) are what internal/verify/nemesis injects.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/netfault"
)

// Bounds on waiting for the processes.
const (
	readyTimeout = 90 * time.Second
	stopTimeout  = 60 * time.Second
	readyPoll    = 100 * time.Millisecond
)

// Options shape the cluster.
type Options struct {
	// Binary is the sluice executable.
	Binary string
	// Dir receives node-N/ (log dirs) and node-N.log (each node's output).
	Dir string
	// Nodes is the number of combined nodes; default 3.
	Nodes int
	// Overrides are server.properties keys for every node
	// (min.insync.replicas, default.replication.factor, ...).
	Overrides map[string]string
	// Env is extra environment for every process (SLUICE_BUG=... for the
	// planted-bug builds).
	Env []string
	Log *slog.Logger
}

// Cluster is a running set of node processes. Its methods are safe for
// concurrent use; node ids are 1..Nodes.
type Cluster struct {
	o         Options
	log       *slog.Logger
	clusterID string
	members   []*member
	proxy     *netfault.Proxy
	owners    *netfault.Owners
	clockOK   bool

	mu sync.Mutex
	// procs[i] is node i+1's running process, nil while it is down.
	// Invariant: a non-nil proc has not been reaped (its done is open or
	// it exited on its own, which awaitReady and Kill report).
	procs []*proc
}

// Start formats a cluster under o.Dir, starts every node and waits until
// each is ready (/readyz: the quorum has a leader, the broker is
// registered, unfenced and caught up). On error every started process is
// stopped.
func Start(ctx context.Context, o Options) (*Cluster, error) {
	if o.Nodes <= 0 {
		o.Nodes = 3
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Binary == "" {
		return nil, errors.New("cluster: no sluice binary given")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("cluster dir %s: %w", o.Dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cluster dir: %w", err)
	}
	o.Dir = dir
	c := &Cluster{o: o, log: o.Log, owners: netfault.NewOwners(o.Nodes), procs: make([]*proc, o.Nodes)}
	c.proxy = netfault.NewProxy(c.owners.Identify, o.Log.With("component", "netfault"))
	c.clockOK = faultBuild(o.Binary)
	if c.clusterID, c.members, err = layout(dir, o.Nodes, c.proxy); err != nil {
		c.proxy.Close()
		return nil, err
	}
	for i := range c.members {
		if err := c.launch(i); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	for i := range c.members {
		if err := c.awaitReady(ctx, i); err != nil {
			return nil, errors.Join(err, c.Close())
		}
	}
	c.log.Info("cluster ready", "id", c.clusterID, "nodes", o.Nodes, "bootstrap", c.BootstrapServers(), "dir", dir)
	return c, nil
}

// ClusterID is the id every node was formatted with.
func (c *Cluster) ClusterID() string { return c.clusterID }

// BootstrapServers are the nodes' client addresses.
func (c *Cluster) BootstrapServers() []string {
	out := make([]string, len(c.members))
	for i, m := range c.members {
		out[i] = m.client
	}
	return out
}

// Nodes are the node ids, 1..N.
func (c *Cluster) Nodes() []int32 {
	out := make([]int32, len(c.members))
	for i, m := range c.members {
		out[i] = m.id
	}
	return out
}

// LogPath is node id's output file (every start appends to it).
func (c *Cluster) LogPath(id int32) string {
	if i, err := c.index(id); err == nil {
		return c.members[i].logFile
	}
	return ""
}

func (c *Cluster) index(id int32) (int, error) {
	if id < 1 || int(id) > len(c.members) {
		return 0, fmt.Errorf("no node %d (nodes are 1-%d)", id, len(c.members))
	}
	return int(id - 1), nil
}

// Close stops every running node (SIGTERM, SIGKILL after a bound) and the
// proxy; the dirs stay for a look afterwards.
func (c *Cluster) Close() error {
	c.mu.Lock()
	procs := append([]*proc(nil), c.procs...)
	clear(c.procs)
	c.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for i, p := range procs {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.stop(stopTimeout)
			c.owners.Set(i, 0)
		}()
	}
	wg.Wait()
	c.proxy.Close()
	return errors.Join(errs...)
}
