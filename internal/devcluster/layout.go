// Package devcluster runs a cluster of N combined (broker and controller)
// nodes on one machine for development and trying Sluice out: `sluice dev
// cluster N` starts N child processes of the sluice binary on 127.0.0.1,
// formatted with one cluster id, waits until every node is ready, and stops
// them all together. It is not a way to run production: every node shares
// one machine's disk and fate.
package devcluster

import (
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Port layout: node i (1-based) serves clients on BasePort+i-1, its
// controller listener on BasePort+controllerPortOffset+i-1 and its metrics
// on MetricsBasePort+i-1.
const (
	controllerPortOffset = 100
	// MaxNodes bounds N so the client and controller port ranges never
	// overlap.
	MaxNodes = 20
	host     = "127.0.0.1"
)

// Options say how many nodes to run, where and from which binary.
type Options struct {
	Nodes int
	// Binary is the sluice executable each node runs (`Binary server ...`).
	Binary string
	// Dir holds node-N/ (its log dir) and node-N.log (its output).
	Dir             string
	BasePort        int
	MetricsBasePort int
	// Console is node 1's sluice.console.listener; "" starts no console.
	Console string
	// Overrides are key=value settings given to every node after the
	// cluster's own, so they win.
	Overrides []string
	// Out receives the progress lines (pids, addresses, ready, stopped).
	Out   io.Writer
	Clock clock.Clock
	// ReadyTimeout bounds the wait for every node's /readyz; StopTimeout
	// the wait for the nodes to exit after SIGTERM before they are killed.
	ReadyTimeout time.Duration
	StopTimeout  time.Duration
}

// Node is one member of the cluster and where it listens.
type Node struct {
	ID             int32
	ClientAddr     string
	ControllerAddr string
	MetricsAddr    string
	LogDir         string
	LogFile        string
}

// plan checks opts and lays out the nodes.
func plan(opts Options) ([]Node, error) {
	if opts.Nodes < 1 || opts.Nodes > MaxNodes {
		return nil, fmt.Errorf("%d nodes: want 1 to %d", opts.Nodes, MaxNodes)
	}
	top := opts.BasePort + controllerPortOffset + opts.Nodes - 1
	if opts.BasePort < 1 || top > 65535 {
		return nil, fmt.Errorf("base port %d: the ports up to %d must lie in 1-65535", opts.BasePort, top)
	}
	if opts.MetricsBasePort < 1 || opts.MetricsBasePort+opts.Nodes-1 > 65535 {
		return nil, fmt.Errorf("metrics base port %d out of range", opts.MetricsBasePort)
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", opts.Dir, err)
	}
	nodes := make([]Node, opts.Nodes)
	for i := range nodes {
		name := "node-" + strconv.Itoa(i+1)
		nodes[i] = Node{
			ID:             int32(i + 1),
			ClientAddr:     addr(opts.BasePort + i),
			ControllerAddr: addr(opts.BasePort + controllerPortOffset + i),
			MetricsAddr:    addr(opts.MetricsBasePort + i),
			LogDir:         filepath.Join(dir, name),
			LogFile:        filepath.Join(dir, name+".log"),
		}
	}
	if err := checkDistinct(nodes, opts.Console); err != nil {
		return nil, err
	}
	return nodes, nil
}

func addr(port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

// checkDistinct refuses a layout where two listeners share an address (a
// metrics range overlapping the client ports, say).
func checkDistinct(nodes []Node, console string) error {
	seen := map[string]string{}
	add := func(a, what string) error {
		if prev, ok := seen[a]; ok {
			return fmt.Errorf("%s and %s would both listen on %s: choose other ports", prev, what, a)
		}
		seen[a] = what
		return nil
	}
	for _, n := range nodes {
		for _, l := range [][2]string{{n.ClientAddr, "client"}, {n.ControllerAddr, "controller"}, {n.MetricsAddr, "metrics"}} {
			if err := add(l[0], fmt.Sprintf("node %d's %s listener", n.ID, l[1])); err != nil {
				return err
			}
		}
	}
	if console != "" {
		return add(console, "the console")
	}
	return nil
}

// voters is controller.quorum.voters: every node votes.
func voters(nodes []Node) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprintf("%d@%s", n.ID, n.ControllerAddr)
	}
	return strings.Join(parts, ",")
}

// args is node n's `sluice server` command line.
func args(nodes []Node, n Node, opts Options) []string {
	rf := strconv.Itoa(min(len(nodes), 3))
	props := []string{
		"process.roles=broker,controller",
		"node.id=" + strconv.Itoa(int(n.ID)),
		"controller.quorum.voters=" + voters(nodes),
		"controller.listener.names=CONTROLLER",
		"listeners=PLAINTEXT://" + n.ClientAddr + ",CONTROLLER://" + n.ControllerAddr,
		"advertised.listeners=PLAINTEXT://" + n.ClientAddr,
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"log.dirs=" + n.LogDir,
		"sluice.metrics.listener=" + n.MetricsAddr,
		// Kafka's defaults (3, and a min ISR of 2) need 3 brokers; fewer
		// nodes would never create __consumer_offsets.
		"offsets.topic.replication.factor=" + rf,
		"transaction.state.log.replication.factor=" + rf,
		"transaction.state.log.min.isr=" + strconv.Itoa(min(len(nodes), 2)),
	}
	if n.ID == 1 && opts.Console != "" {
		props = append(props, "sluice.console.listener="+opts.Console)
	}
	props = append(props, opts.Overrides...)
	out := []string{"server"}
	for _, p := range props {
		out = append(out, "--override", p)
	}
	return out
}

// checkPorts fails, naming the address, when a listener's port is taken:
// better than N children failing one by one.
func checkPorts(nodes []Node, console string) error {
	addrs := []string{}
	for _, n := range nodes {
		addrs = append(addrs, n.ClientAddr, n.ControllerAddr, n.MetricsAddr)
	}
	if console != "" {
		addrs = append(addrs, console)
	}
	for _, a := range addrs {
		l, err := net.Listen("tcp", a)
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("%s is not free (another sluice or Kafka running?)", a)
		}
		if err != nil {
			return err // net's error names the address
		}
		_ = l.Close()
	}
	return nil
}

// prepare formats every node's log dir with one cluster id: the id already
// in a formatted node's meta.properties when the cluster ran before (so a
// restart keeps its topics), else a new one. It refuses a data dir holding
// more nodes than asked for, whose voters would disagree.
func prepare(fsys vfs.FS, dir string, nodes []Node) (string, error) {
	extra := filepath.Join(filepath.Dir(nodes[0].LogDir), fmt.Sprintf("node-%d", len(nodes)+1), metafile.MetaPropertiesFile)
	if _, err := metafile.ReadMetaProperties(fsys, extra); err == nil {
		return "", fmt.Errorf("%s holds a cluster of more than %d nodes: start it with its own count or remove the directory", dir, len(nodes))
	}
	clusterID := ""
	for _, n := range nodes {
		m, err := metafile.ReadMetaProperties(fsys, filepath.Join(n.LogDir, metafile.MetaPropertiesFile))
		switch {
		case err == nil && clusterID != "" && m.ClusterID != clusterID:
			return "", fmt.Errorf("%s belongs to cluster %s, not %s: remove %s to start afresh", n.LogDir, m.ClusterID, clusterID, dir)
		case err == nil:
			clusterID = m.ClusterID
		case !vfs.IsNotExist(err):
			return "", fmt.Errorf("read node %d's meta.properties: %w", n.ID, err)
		}
	}
	if clusterID == "" {
		id, err := kafka.RandomUUID()
		if err != nil {
			return "", fmt.Errorf("draw a cluster id: %w", err)
		}
		clusterID = id.String()
	}
	for _, n := range nodes {
		if err := logdir.Format(fsys, []string{n.LogDir}, clusterID, n.ID, true); err != nil {
			return "", fmt.Errorf("format node %d: %w", n.ID, err)
		}
	}
	return clusterID, nil
}
