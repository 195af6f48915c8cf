package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
)

// cluster is the three nodes, the admin client and the traffic.
type cluster struct {
	o     options
	nodes []*node
	admin *kgo.Client
	logs  *os.File // client error lines

	prod       *producer
	cons       *consumer
	stopProd   context.CancelFunc
	stopCons   context.CancelFunc
	prodDone   chan struct{}
	consDone   chan struct{}
	trafficRan bool
}

func newCluster(o options) (*cluster, error) {
	ports, err := testbin.FreePorts(9)
	if err != nil {
		return nil, err
	}
	c := &cluster{o: o}
	var voters []string
	for i := range 3 {
		n := &node{id: int32(i + 1), dir: filepath.Join(o.dir, fmt.Sprintf("node%d", i+1)),
			brokerPort: ports[3*i], ctrlPort: ports[3*i+1], metricsPort: ports[3*i+2]}
		c.nodes = append(c.nodes, n)
		voters = append(voters, fmt.Sprintf("%d@%s", n.id, n.ctrl()))
	}
	for _, n := range c.nodes {
		if err := n.writeConfig(strings.Join(voters, ",")); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cluster) seeds() []string {
	var s []string
	for _, n := range c.nodes {
		s = append(s, n.broker())
	}
	return s
}

// startOld formats the nodes and starts them with the old binary, creates
// the topic and starts the traffic.
func (c *cluster) startOld(ctx context.Context) error {
	out, err := exec.Command(c.o.oldBin, "storage", "random-uuid").Output()
	if err != nil {
		return fmt.Errorf("storage random-uuid: %w", err)
	}
	clusterID := strings.TrimSpace(string(out))
	for _, n := range c.nodes {
		if err := n.format(c.o.oldBin, clusterID); err != nil {
			return err
		}
		if err := n.launch(c.o.oldBin); err != nil {
			return err
		}
	}
	for _, n := range c.nodes {
		if err := n.waitReady(ctx); err != nil {
			return err
		}
	}
	fmt.Printf("3 nodes up with the old binary (cluster %s): brokers %s\n", clusterID, strings.Join(c.seeds(), ","))
	if c.admin, err = kgo.NewClient(kgo.SeedBrokers(c.seeds()...)); err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	if err := c.createTopic(ctx); err != nil {
		return err
	}
	return c.startTraffic(ctx)
}

func (c *cluster) createTopic(ctx context.Context) error {
	minISR := "2"
	resp, err := kadm.NewClient(c.admin).CreateTopic(ctx, int32(c.o.partitions), 3,
		map[string]*string{"min.insync.replicas": &minISR}, c.o.topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic %s: %w", c.o.topic, err)
	}
	fmt.Printf("topic %s: %d partitions, replication factor 3, min.insync.replicas 2\n", c.o.topic, c.o.partitions)
	return waitFor(ctx, 60*time.Second, "every ISR complete", inAllISRs(c.admin, c.nodes, -1))
}

// startTraffic starts the producer and the consumer and waits until both
// are moving and the group's offsets partitions are fully replicated too.
func (c *cluster) startTraffic(ctx context.Context) error {
	var err error
	if c.logs, err = openLog(filepath.Join(c.o.dir, "client-errors.log")); err != nil {
		return err
	}
	if c.prod, err = newProducer(c.seeds(), c.o.topic, c.o.every, newErrTally("producer", c.logs)); err != nil {
		return err
	}
	if c.cons, err = newConsumer(c.seeds(), c.o.topic, "upgrade-test", newErrTally("consumer", c.logs)); err != nil {
		return err
	}
	var pctx, cctx context.Context
	pctx, c.stopProd = context.WithCancel(ctx)
	cctx, c.stopCons = context.WithCancel(ctx)
	c.prodDone, c.consDone, c.trafficRan = make(chan struct{}), make(chan struct{}), true
	go func() { defer close(c.prodDone); c.prod.run(pctx) }()
	go func() { defer close(c.consDone); c.cons.run(cctx) }()
	if err := c.waitProgress(ctx, 200); err != nil {
		return err
	}
	return waitFor(ctx, 60*time.Second, "every ISR complete with the group's offsets", inAllISRs(c.admin, c.nodes, -1))
}

// waitProgress waits until the producer has n more acknowledgements and
// the consumer has seen records.
func (c *cluster) waitProgress(ctx context.Context, n int) error {
	base := c.prod.ackedCount()
	return waitFor(ctx, 60*time.Second, "producer and consumer progress", func(context.Context) error {
		acked := c.prod.ackedCount()
		c.cons.mu.Lock()
		seen := len(c.cons.seen)
		c.cons.mu.Unlock()
		if acked-base < n || seen == 0 {
			return fmt.Errorf("%d new acknowledgements of %d wanted, consumer saw %d", acked-base, n, seen)
		}
		return nil
	})
}

// close stops everything still running: the clients, then the nodes
// (killed, since a failed run must not wait for them).
func (c *cluster) close() {
	if c.trafficRan {
		c.stopProd()
		c.stopCons()
		<-c.prodDone
		<-c.consDone
		c.prod.client.Close()
		c.cons.client.Close()
	}
	if c.admin != nil {
		c.admin.Close()
	}
	for _, n := range c.nodes {
		n.kill()
	}
	if c.logs != nil {
		c.logs.Close()
	}
}
