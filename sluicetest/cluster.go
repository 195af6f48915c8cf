package sluicetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Cluster is Sluice nodes running in this process. Its methods are safe for
// concurrent use.
type Cluster struct {
	opts      options
	root      string
	ownsRoot  bool
	clusterID string
	log       *slog.Logger
	nodes     []*member // index id-1
	ctl       control
	net       network

	closeOnce sync.Once
	closeErr  error
}

// Start is NewCluster for a test: it fails tb when the cluster cannot start
// and closes the cluster when the test ends.
func Start(tb testing.TB, opts ...Opt) *Cluster {
	tb.Helper()
	c, err := NewCluster(opts...)
	if err != nil {
		tb.Fatalf("sluicetest: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Errorf("sluicetest: close: %v", err)
		}
	})
	return c
}

// NewCluster formats and starts the nodes on free ports of 127.0.0.1 and
// returns once every node serves clients and the seed topics have leaders.
func NewCluster(opts ...Opt) (*Cluster, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt.apply(&o)
	}
	c := &Cluster{opts: o, root: o.dir, log: o.logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if err := c.layout(); err != nil {
		c.removeRoot()
		return nil, err
	}
	c.net.init(c)
	if err := c.startAll(); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := c.seed(); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// layout picks the root dir, the ports and the cluster id and formats every
// node's log dir (a single node formats its own, as `sluice server` does).
func (c *Cluster) layout() error {
	if c.root == "" {
		dir, err := os.MkdirTemp("", "sluicetest-")
		if err != nil {
			return fmt.Errorf("sluicetest: temp dir: %w", err)
		}
		c.root, c.ownsRoot = dir, true
	}
	id, err := kafka.RandomUUID()
	if err != nil {
		return err
	}
	c.clusterID = id.String()
	ports, err := testbin.FreePorts(2 * c.opts.nodes)
	if err != nil {
		return fmt.Errorf("sluicetest: free ports: %w", err)
	}
	for i := range c.opts.nodes {
		m := &member{
			c:          c,
			id:         int32(i + 1),
			brokerAddr: fmt.Sprintf("127.0.0.1:%d", ports[2*i]),
			ctrlAddr:   fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]),
			logDir:     filepath.Join(c.root, fmt.Sprintf("node-%d", i+1)),
		}
		if c.opts.inMemory {
			m.mem = vfs.NewMem()
		}
		if err := m.format(c.clusterID); err != nil {
			return err
		}
		c.nodes = append(c.nodes, m)
	}
	return nil
}

// voters is controller.quorum.voters.
func (c *Cluster) voters() string {
	parts := make([]string, len(c.nodes))
	for i, m := range c.nodes {
		parts[i] = fmt.Sprintf("%d@%s", m.id, m.ctrlAddr)
	}
	return strings.Join(parts, ",")
}

// startAll starts every node at once and waits for all of them.
func (c *Cluster) startAll() error {
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i, m := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.start()
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (c *Cluster) seed() error {
	if len(c.opts.seeds) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), seedTimeout)
	defer cancel()
	rf := int16(min(3, len(c.nodes)))
	for _, s := range c.opts.seeds {
		for _, t := range s.topics {
			if err := c.CreateTopic(ctx, t, s.partitions, rf); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListenAddrs are the client (PLAINTEXT) addresses of every node, node 1
// first, whether running or not.
func (c *Cluster) ListenAddrs() []string {
	out := make([]string, len(c.nodes))
	for i, m := range c.nodes {
		out[i] = m.brokerAddr
	}
	return out
}

// NodeIDs are the nodes' ids: 1 to NumNodes.
func (c *Cluster) NodeIDs() []int32 {
	out := make([]int32, len(c.nodes))
	for i, m := range c.nodes {
		out[i] = m.id
	}
	return out
}

// ClusterID is the cluster's id, as clients see it in Metadata.
func (c *Cluster) ClusterID() string { return c.clusterID }

// Client returns a franz-go client seeded with every node's address, with
// a metadata min age of 10 ms (kgo's default is 5 s, and it waits up to
// 250 ms to look again for a topic just created) so that a test sees new
// topics and moved leaders at once; opts come after and win. The caller
// closes it.
func (c *Cluster) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.MetadataMinAge(10 * time.Millisecond)}
	return kgo.NewClient(append(base, opts...)...)
}

// Close stops every running node cleanly and removes the temp dir it made.
func (c *Cluster) Close() error {
	c.closeOnce.Do(func() {
		var errs []error
		for _, m := range c.nodes {
			errs = append(errs, m.stop(false))
		}
		c.net.close()
		c.removeRoot()
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

func (c *Cluster) removeRoot() {
	if c.ownsRoot {
		os.RemoveAll(c.root)
	}
}

// node returns the member with id, or an error naming the ids there are.
func (c *Cluster) node(id int32) (*member, error) {
	if id < 1 || int(id) > len(c.nodes) {
		return nil, fmt.Errorf("sluicetest: no node %d (nodes are 1 to %d)", id, len(c.nodes))
	}
	return c.nodes[id-1], nil
}
