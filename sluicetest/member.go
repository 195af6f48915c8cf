package sluicetest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/node"
	"github.com/sluice-io/sluice/internal/vfs"
)

// startTimeout bounds a node's start; seedTimeout the seed topics' creation.
const (
	startTimeout = 60 * time.Second
	seedTimeout  = 60 * time.Second
)

// raftTick is the metadata quorum's tick: a tenth of the test cluster's
// election timeout, as the defaults' 100 ms is of 1 s.
const raftTick = 10 * time.Millisecond

// errKilled is what a killed node's file operations fail with while it
// winds down, so it writes nothing a killed process could not have.
var errKilled = errors.New("sluicetest: node killed")

// member is one node: its fixed addresses and dir, and the running node.
type member struct {
	c                    *Cluster
	id                   int32
	brokerAddr, ctrlAddr string
	logDir               string
	// mem is the node's in-memory file system (InMemory only); it
	// outlives restarts, as a disk does.
	mem *vfs.MemFS

	mu struct {
		sync.Mutex
		node   *node.Node
		fs     *vfs.ErrorFS
		cancel context.CancelFunc
		done   chan error
		// gen counts the node's starts, so a halt of an earlier run
		// never stops a later one.
		gen int
	}
}

func (m *member) baseFS() vfs.FS {
	if m.mem != nil {
		return m.mem
	}
	return vfs.Default
}

// format formats the node's log dir, as `sluice storage format` does
// before a cluster's first start. In memory it then syncs every directory
// on the way to it: a disk prepared before the test, which a simulated
// power loss does not take back.
func (m *member) format(clusterID string) error {
	fsys := m.baseFS()
	if err := fsys.MkdirAll(m.logDir, 0o755); err != nil {
		return fmt.Errorf("sluicetest: node %d dir: %w", m.id, err)
	}
	if err := logdir.Format(fsys, []string{m.logDir}, clusterID, m.id, false); err != nil {
		return fmt.Errorf("sluicetest: format node %d: %w", m.id, err)
	}
	if m.mem == nil {
		return nil
	}
	for dir := m.logDir; ; dir = filepath.Dir(dir) {
		if err := m.mem.SyncDir(dir); err != nil {
			return fmt.Errorf("sluicetest: node %d dir: %w", m.id, err)
		}
		if parent := filepath.Dir(dir); parent == dir {
			return nil
		}
	}
}

// properties are the node's server.properties; the cluster's Config keys
// win over everything but the node's identity, listeners and quorum.
func (m *member) properties() map[string]string {
	n := len(m.c.nodes)
	props := map[string]string{
		// With 10 ms Raft ticks (raftTick) a quorum elects its first
		// leader within 100 to 200 ms instead of 1 to 2 s; fetch
		// timeout and heartbeats scale with it.
		"controller.quorum.election.timeout.ms": "100",
		"controller.quorum.fetch.timeout.ms":    "200",
		// A group's first member need not wait 3 s for others to join.
		"group.initial.rebalance.delay.ms":         "0",
		"offsets.topic.replication.factor":         strconv.Itoa(min(n, 3)),
		"transaction.state.log.replication.factor": strconv.Itoa(min(n, 3)),
		"transaction.state.log.min.isr":            strconv.Itoa(min(n, 2)),
	}
	for k, v := range m.c.opts.config {
		props[k] = v
	}
	for k, v := range map[string]string{
		"process.roles":                  "broker,controller",
		"node.id":                        strconv.Itoa(int(m.id)),
		"controller.quorum.voters":       m.c.voters(),
		"controller.listener.names":      "CONTROLLER",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"listeners":                      "PLAINTEXT://" + m.brokerAddr + ",CONTROLLER://" + m.ctrlAddr,
		"advertised.listeners":           "PLAINTEXT://" + m.brokerAddr,
		"log.dirs":                       m.logDir,
	} {
		props[k] = v
	}
	return props
}

// start builds and runs the node and waits until it serves clients.
func (m *member) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.node != nil {
		return fmt.Errorf("sluicetest: node %d is running", m.id)
	}
	cfg, err := config.Parse("", m.properties())
	if err != nil {
		return fmt.Errorf("sluicetest: node %d config: %w", m.id, err)
	}
	efs := vfs.NewErrorFS(m.baseFS(), nil)
	m.mu.gen++
	gen := m.mu.gen
	n, err := node.New(cfg, m.c.log.With("node", m.id), nil,
		node.WithFS(efs),
		node.WithRequestHook(m.c.ctl.hook(m.id)),
		node.WithPeerDial(m.c.net.dialer(m.id)),
		node.WithRaftTick(raftTick),
		node.WithHalt(func() { go m.halt(gen) }))
	if err != nil {
		return fmt.Errorf("sluicetest: node %d: %w", m.id, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	select {
	case <-n.Ready():
	case err := <-done:
		cancel()
		return fmt.Errorf("sluicetest: node %d stopped while starting: %w", m.id, err)
	case <-time.After(startTimeout):
		cancel()
		<-done
		return fmt.Errorf("sluicetest: node %d not ready after %s", m.id, startTimeout)
	}
	m.mu.node, m.mu.fs, m.mu.cancel, m.mu.done = n, efs, cancel, done
	return nil
}

// stop ends the running node, if any. A kill first makes every file
// operation fail (so the node writes nothing more: no flush, no clean
// shutdown marker), drops an in-memory FS's unsynced writes and skips the
// controlled shutdown; its stop errors are expected and dropped.
func (m *member) stop(kill bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.stopLocked(kill)
}

// stopGen kills run gen if it still runs.
func (m *member) stopGen(gen int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.gen != gen {
		return nil
	}
	return m.stopLocked(true)
}

func (m *member) stopLocked(kill bool) error {
	n := m.mu.node
	if n == nil {
		return nil
	}
	if kill {
		n.StopAbruptly()
		m.mu.fs.SetInjector(vfs.InjectorFunc(func(vfs.Op, string, int) error { return errKilled }))
		if m.mem != nil {
			m.mem.Crash()
		}
	}
	m.mu.cancel()
	err := <-m.mu.done
	m.mu.node, m.mu.fs, m.mu.cancel, m.mu.done = nil, nil, nil, nil
	if kill {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sluicetest: node %d stopped with: %w", m.id, err)
	}
	return nil
}

// halt stops run gen of the node as a kill would: its log dirs failed
// and a `sluice server` process would have exited.
func (m *member) halt(gen int) {
	m.mu.Lock()
	current := m.mu.gen == gen && m.mu.node != nil
	m.mu.Unlock()
	if current {
		m.c.log.Warn("sluicetest: node halted (its log dirs failed); RestartNode starts it again", "node", m.id)
		_ = m.stopGen(gen)
	}
}

// running is the node when it runs, else nil.
func (m *member) running() *node.Node {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.node
}
