package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sluiceCluster runs n `sluice server` processes as one cluster of combined broker and
// controller nodes (a static quorum of all n), each formatted with `sluice storage format`
// and with its own data dir under one session dir, as test/interop's cluster scripts do.
type sluiceCluster struct {
	bin   string
	dir   string // removed by Close
	nodes []*sluiceClusterNode
}

type sluiceClusterNode struct {
	id         int
	port, ctrl int
	proc       *proc
	logPath    string
}

func newSluiceCluster(bin, scratch string, n int) (*sluiceCluster, error) {
	dir, err := os.MkdirTemp(scratch, "sluice-cluster-")
	if err != nil {
		return nil, fmt.Errorf("sluice cluster dir: %w", err)
	}
	c := &sluiceCluster{bin: bin, dir: dir}
	for i := 1; i <= n; i++ {
		c.nodes = append(c.nodes, &sluiceClusterNode{id: i, logPath: filepath.Join(dir, fmt.Sprintf("node-%d.log", i))})
	}
	return c, nil
}

func (c *sluiceCluster) System() system { return sysSluice }
func (c *sluiceCluster) Nodes() int     { return len(c.nodes) }

func (c *sluiceCluster) Bootstrap() string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(n.port)
	}
	return strings.Join(addrs, ",")
}

func (c *sluiceCluster) PIDs() []int {
	var pids []int
	for _, n := range c.nodes {
		if n.proc != nil {
			pids = append(pids, n.proc.pid)
		}
	}
	return pids
}

// clusterNodeOverrides are the --override flags of one node (for format and server).
// Internal topics are replicated to every node, as kafka-ref configures Kafka's.
func clusterNodeOverrides(id int, nodes []*sluiceClusterNode, dataDir string) []string {
	voters := make([]string, len(nodes))
	var self *sluiceClusterNode
	for i, n := range nodes {
		voters[i] = fmt.Sprintf("%d@127.0.0.1:%d", n.id, n.ctrl)
		if n.id == id {
			self = n
		}
	}
	rf := strconv.Itoa(len(nodes))
	kv := []string{
		"process.roles=broker,controller",
		"node.id=" + strconv.Itoa(id),
		"controller.quorum.voters=" + strings.Join(voters, ","),
		"controller.listener.names=CONTROLLER",
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", self.port, self.ctrl),
		fmt.Sprintf("advertised.listeners=PLAINTEXT://127.0.0.1:%d", self.port),
		"log.dirs=" + dataDir,
		"offsets.topic.replication.factor=" + rf,
		"transaction.state.log.replication.factor=" + rf,
		"transaction.state.log.min.isr=" + strconv.Itoa(clusterMinISR(len(nodes))),
		// The reference kit sets the same for Kafka, so a group (if used) joins at once.
		"group.initial.rebalance.delay.ms=0",
	}
	args := make([]string, 0, 2*len(kv))
	for _, s := range kv {
		args = append(args, "--override", s)
	}
	return args
}

func (c *sluiceCluster) Start(ctx context.Context) error {
	ports, err := freePorts(2 * len(c.nodes))
	if err != nil {
		return err
	}
	for i, n := range c.nodes {
		n.port, n.ctrl = ports[2*i], ports[2*i+1]
	}
	out, err := exec.CommandContext(ctx, c.bin, "storage", "random-uuid").Output()
	if err != nil {
		return fmt.Errorf("sluice storage random-uuid: %w", err)
	}
	clusterID := strings.TrimSpace(string(out))
	for _, n := range c.nodes {
		args := append([]string{"storage", "format", "--cluster-id", clusterID, "--config", os.DevNull},
			clusterNodeOverrides(n.id, c.nodes, c.dataDir(n))...)
		if out, err := exec.CommandContext(ctx, c.bin, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("sluice storage format node %d: %w: %s", n.id, err, truncate(string(out), 800))
		}
	}
	for _, n := range c.nodes {
		argv := append([]string{c.bin, "server"}, clusterNodeOverrides(n.id, c.nodes, c.dataDir(n))...)
		p, err := startProc(argv, n.logPath, nil)
		if err != nil {
			return fmt.Errorf("sluice node %d: %w", n.id, err)
		}
		n.proc = p
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for _, n := range c.nodes {
		if _, err := waitAPIVersions(ctx, "127.0.0.1:"+strconv.Itoa(n.port), n.proc); err != nil {
			return fmt.Errorf("sluice node %d: %w (log %s: %s)", n.id, err, n.logPath, tailFile(n.logPath, 800))
		}
	}
	if err := waitBrokers(ctx, c.Bootstrap(), len(c.nodes)); err != nil {
		return fmt.Errorf("%w%s", err, c.logTails(600))
	}
	return nil
}

// logTails is the end of every node's log, for a start-up failure (Close removes them).
func (c *sluiceCluster) logTails(n int64) string {
	var b strings.Builder
	for _, node := range c.nodes {
		fmt.Fprintf(&b, "; node %d log: %s", node.id, tailFile(node.logPath, n))
	}
	return b.String()
}

func (c *sluiceCluster) dataDir(n *sluiceClusterNode) string {
	return filepath.Join(c.dir, fmt.Sprintf("node-%d", n.id))
}

func (c *sluiceCluster) Close() error {
	var err error
	for _, n := range c.nodes {
		if n.proc == nil {
			continue
		}
		if termErr := signalTerm(n.proc); termErr != nil && err == nil {
			err = termErr
		}
	}
	for _, n := range c.nodes {
		if n.proc == nil {
			continue
		}
		if termErr := n.proc.terminate(30 * time.Second); termErr != nil && err == nil {
			err = termErr
		}
	}
	if rmErr := os.RemoveAll(c.dir); rmErr != nil && err == nil {
		err = fmt.Errorf("remove %s: %w", c.dir, rmErr)
	}
	return err
}

// waitBrokers polls every node's own Metadata answer until each lists n brokers (every
// node has registered, is unfenced, and every node's metadata image shows it: a client may
// bootstrap from any of them), or fails when ctx ends, naming what each node listed.
func waitBrokers(ctx context.Context, bootstrap string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...))
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	addrs := seeds(bootstrap)
	listed := make([]string, len(addrs))
	for {
		ready := true
		for i, b := range cl.SeedBrokers() {
			ids, err := brokersListedBy(ctx, b)
			if err != nil {
				listed[i] = fmt.Sprintf("%s: %v", addrs[i], err)
			} else {
				listed[i] = fmt.Sprintf("%s lists %v", addrs[i], ids)
			}
			if err != nil || len(ids) < n {
				ready = false
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not every node lists the %d brokers (%s): %w", n, strings.Join(listed, "; "), ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// brokersListedBy asks one node for cluster metadata without topics and returns the ids of
// the brokers it lists.
func brokersListedBy(ctx context.Context, b *kgo.Broker) ([]int32, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	kresp, err := b.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, ok := kresp.(*kmsg.MetadataResponse)
	if !ok {
		return nil, fmt.Errorf("metadata answered with %T", kresp)
	}
	ids := make([]int32, len(resp.Brokers))
	for i, br := range resp.Brokers {
		ids[i] = br.NodeID
	}
	slices.Sort(ids)
	return ids, nil
}
