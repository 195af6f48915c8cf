package replication

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/vfs"
)

// simCluster is N brokers in one process, each a real ReplicaManager over
// its own in-memory file system, replicating over a fault-injecting
// transport, with a test controller that runs the real
// controller.AlterPartition and ElectLeader and publishes every change to
// the brokers it can reach.
type simCluster struct {
	t    testing.TB
	seed uint64
	// noise drops and delays a seeded share of fetches and AlterPartition
	// answers; benchmarks turn it off.
	noise  bool
	topic  string
	nParts int32

	mu struct {
		sync.Mutex
		rng      *rand.Rand
		image    *metadata.Image
		brokers  map[int32]*simBroker
		isolated map[int32]bool
		crashed  map[int32]bool
		// cut holds directed links (follower, leader) that drop fetches.
		cut map[[2]int32]bool
		// downFS holds the file systems of crashed brokers.
		downFS map[int32]*vfs.MemFS
	}
	ctl       *controller.Controller
	transport *LocalTransport
}

type simBroker struct {
	id   int32
	fs   *vfs.MemFS
	logs *replicationtest.MemLogs
	rm   *ReplicaManager
}

const simLagMax = 300 * time.Millisecond

func newSimCluster(t testing.TB, seed uint64, brokers int32, parts int32, noise bool) *simCluster {
	c := &simCluster{t: t, seed: seed, topic: "r", nParts: parts, noise: noise,
		ctl: controller.New(controller.Options{}), transport: NewLocalTransport()}
	c.mu.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c.mu.brokers = make(map[int32]*simBroker)
	c.mu.isolated = make(map[int32]bool)
	c.mu.crashed = make(map[int32]bool)
	c.mu.cut = make(map[[2]int32]bool)
	c.mu.downFS = make(map[int32]*vfs.MemFS)
	var recs []metadata.Record
	for id := int32(1); id <= brokers; id++ {
		recs = append(recs, &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1, Fenced: true},
			&metadata.UnfenceBrokerRecord{BrokerID: id, BrokerEpoch: 1})
	}
	topicID := replicationtest.TopicID(7)
	recs = append(recs, &metadata.TopicRecord{Name: c.topic, TopicID: topicID})
	for p := range parts {
		var replicas []int32
		for r := range int32(3) {
			replicas = append(replicas, (p+r)%brokers+1)
		}
		recs = append(recs, &metadata.PartitionRecord{TopicID: topicID, Partition: p, Replicas: replicas,
			ISR: slices.Clone(replicas), Leader: replicas[0]})
	}
	c.mu.image = metadata.EmptyImage()
	c.mu.Lock()
	c.commitLocked(recs)
	for id := int32(1); id <= brokers; id++ {
		c.startBrokerLocked(id, vfs.NewMem())
	}
	c.mu.Unlock()
	t.Cleanup(c.stop)
	return c
}

func (c *simCluster) fatalf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("seed %d: %s", c.seed, fmt.Sprintf(format, args...))
}

func (c *simCluster) startBrokerLocked(id int32, fsys *vfs.MemFS) {
	logs := replicationtest.NewMemLogs(fsys, clock.Real{})
	logs.Unclean = true
	b := &simBroker{id: id, fs: fsys, logs: logs}
	rm, err := NewReplicaManager(Options{
		BrokerID: id, FS: fsys, Logs: logs,
		Logger:          slog.New(slog.NewTextHandler(io.Discard, nil)),
		DefaultSettings: simSettings(logs),
		Replication: ReplicationOptions{
			Transport:         &simTransport{c: c, from: id},
			AlterPartition:    &simAlterPartition{c: c, from: id},
			ReplicaLagTimeMax: simLagMax,
			FetchWaitMax:      50 * time.Millisecond,
			FetchBackoff:      20 * time.Millisecond,
			// Small fetches make followers catch up in steps.
			FetchMaxBytes: 4096,
		},
	})
	if err != nil {
		c.fatalf("start broker %d: %v", id, err)
	}
	b.rm = rm
	rm.ApplyImage(c.mu.image)
	c.mu.brokers[id] = b
	c.transport.Register(id, rm)
}

// commitLocked replays records into the image and publishes the change to
// every reachable broker, in order.
func (c *simCluster) commitLocked(recs []metadata.Record) {
	if len(recs) == 0 {
		return
	}
	d := metadata.NewDelta(c.mu.image)
	for _, r := range recs {
		if err := d.Replay(c.mu.image.Offset()+1, 1, r); err != nil {
			c.fatalf("replay %T: %v", r, err)
		}
	}
	c.mu.image = d.Apply()
	for id, b := range c.mu.brokers {
		if !c.mu.isolated[id] {
			b.rm.ApplyDelta(d, c.mu.image)
		}
	}
}

// fenceLocked fences a broker as the controller does when its heartbeats
// stop: it leaves every ISR it is not the last member of, and partitions it
// led get a new leader from the ISR.
func (c *simCluster) fenceLocked(id int32) {
	recs := []metadata.Record{&metadata.FenceBrokerRecord{BrokerID: id, BrokerEpoch: 1}}
	t, _ := c.mu.image.Topic(c.topic)
	usable := func(b int32) bool { return b != id && c.usableLocked(b) }
	for _, p := range t.PartitionIDs() {
		st := t.Partitions[p]
		isr := st.ISR
		if slices.Contains(isr, id) && len(isr) > 1 {
			isr = slices.DeleteFunc(slices.Clone(isr), func(x int32) bool { return x == id })
		}
		rec := &metadata.PartitionChangeRecord{TopicID: t.ID, Partition: p, Leader: metadata.NoLeaderChange, ISR: isr}
		if st.Leader == id {
			st.ISR = isr
			rec.Leader, rec.ISR = controller.ElectLeader(st, usable, false)
		}
		if rec.Leader != metadata.NoLeaderChange || !slices.Equal(isr, st.ISR) {
			recs = append(recs, rec)
		}
	}
	c.commitLocked(recs)
}

func (c *simCluster) usableLocked(id int32) bool {
	b, ok := c.mu.image.Broker(id)
	return ok && !b.Fenced && !c.mu.crashed[id] && !c.mu.isolated[id]
}

// unfenceLocked unfences a broker and elects leaders for leaderless
// partitions it can lead.
func (c *simCluster) unfenceLocked(id int32) {
	c.commitLocked([]metadata.Record{&metadata.UnfenceBrokerRecord{BrokerID: id, BrokerEpoch: 1}})
	t, _ := c.mu.image.Topic(c.topic)
	var recs []metadata.Record
	for _, p := range t.PartitionIDs() {
		st := t.Partitions[p]
		if st.Leader != metadata.NoLeader {
			continue
		}
		if leader, isr := controller.ElectLeader(st, c.usableLocked, false); leader != metadata.NoLeader {
			recs = append(recs, &metadata.PartitionChangeRecord{TopicID: t.ID, Partition: p, Leader: leader, ISR: isr})
		}
	}
	c.commitLocked(recs)
}

// crash stops a broker as kill -9 would (written data survives in the
// page cache, the logs recover on restart) and fences it.
func (c *simCluster) crash(id int32) {
	c.mu.Lock()
	b := c.mu.brokers[id]
	if b == nil || c.mu.isolated[id] {
		c.mu.Unlock()
		return
	}
	c.mu.crashed[id] = true
	delete(c.mu.brokers, id)
	c.transport.Register(id, nil)
	c.fenceLocked(id)
	c.mu.Unlock()
	b.rm.Close()
	if err := b.logs.Close(); err != nil {
		c.fatalf("close logs of broker %d: %v", id, err)
	}
	c.mu.Lock()
	c.mu.downFS[id] = b.fs
	c.mu.Unlock()
}

// restart brings a crashed broker back on its file system and unfences it.
func (c *simCluster) restart(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fsys, ok := c.mu.downFS[id]
	if !ok {
		return
	}
	delete(c.mu.downFS, id)
	delete(c.mu.crashed, id)
	c.startBrokerLocked(id, fsys)
	c.unfenceLocked(id)
}

// isolate cuts a broker off: no fetches to or from it, no metadata, no
// AlterPartition; the controller fences it. It keeps running, believing
// it still leads what it led (a zombie leader).
func (c *simCluster) isolate(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.isolated[id] || c.mu.brokers[id] == nil {
		return
	}
	c.mu.isolated[id] = true
	c.fenceLocked(id)
}

func (c *simCluster) heal(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.mu.isolated[id] {
		return
	}
	delete(c.mu.isolated, id)
	c.mu.brokers[id].rm.ApplyImage(c.mu.image)
	c.unfenceLocked(id)
}

func (c *simCluster) stop() {
	c.mu.Lock()
	brokers := c.mu.brokers
	c.mu.brokers = map[int32]*simBroker{}
	c.mu.Unlock()
	for _, b := range brokers {
		b.rm.Close()
		if err := b.logs.Close(); err != nil {
			c.t.Errorf("close logs of broker %d: %v", b.id, err)
		}
	}
}

// simTransport injects the cluster's faults into follower fetches: cut
// links and isolated brokers drop them, and a seeded share of the rest is
// dropped or delayed.
type simTransport struct {
	c    *simCluster
	from int32
}

var errSimDropped = errors.New("sim: dropped")

func (t *simTransport) FetchFromLeader(ctx context.Context, leader int32, req ReplicaFetchRequest) ([]ReplicaFetchResult, error) {
	c := t.c
	c.mu.Lock()
	blocked := c.mu.isolated[t.from] || c.mu.isolated[leader] || c.mu.cut[[2]int32{t.from, leader}]
	roll := c.mu.rng.IntN(100)
	delay := time.Duration(c.mu.rng.IntN(30)) * time.Millisecond
	c.mu.Unlock()
	if !c.noise {
		roll = 100
	}
	if blocked || roll < 3 {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
		return nil, errSimDropped
	}
	if roll < 15 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
	return c.transport.FetchFromLeader(ctx, leader, req)
}

func (t *simTransport) LeaderLogOffsets(ctx context.Context, leader, replicaID int32, tp kafka.TopicPartition, leaderEpoch int32) (int64, int64, error) {
	c := t.c
	c.mu.Lock()
	blocked := c.mu.isolated[t.from] || c.mu.isolated[leader] || c.mu.cut[[2]int32{t.from, leader}]
	c.mu.Unlock()
	if blocked {
		return 0, 0, errSimDropped
	}
	return c.transport.LeaderLogOffsets(ctx, leader, replicaID, tp, leaderEpoch)
}

// simAlterPartition runs the real controller's AlterPartition on the
// cluster's image; an isolated broker cannot reach it, and a seeded share
// of answers is lost after the change committed.
type simAlterPartition struct {
	c    *simCluster
	from int32
}

func (s *simAlterPartition) AlterPartition(_ context.Context, change ISRChange) (int32, error) {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.isolated[s.from] || c.mu.crashed[s.from] {
		return 0, errSimDropped
	}
	recs, resp := c.ctl.AlterPartition(c.mu.image, change.AlterPartitionRequest(s.from, -1))
	c.commitLocked(recs)
	if c.noise && c.mu.rng.IntN(100) < 5 {
		return 0, errSimDropped
	}
	return AlterPartitionOutcome(resp)
}

// simSettings are every topic's settings in the simulation: acks=all needs
// two in-sync replicas.
func simSettings(logs *replicationtest.MemLogs) *TopicSettings {
	cfg := DefaultTopicConfig()
	cfg.MinInsyncReplicas = 2
	return &TopicSettings{Data: cfg, Log: logs.Options}
}
