package coordinator

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/internal/kafka"
	"sluice/internal/metadata"
)

// Coordinator is the broker's group coordinator: it routes each group to the
// shard of its __consumer_offsets partition.
type Coordinator struct {
	opts Options

	mu struct {
		sync.Mutex
		shards map[int32]*shard
		closed bool
	}
	// creating serializes creations of the offsets topic.
	creating sync.Mutex
}

// New returns a coordinator with no shards; ApplyImage starts them.
func New(opts Options) (*Coordinator, error) {
	opts.withDefaults()
	if opts.Writer == nil {
		return nil, fmt.Errorf("coordinator: no PartitionWriter")
	}
	c := &Coordinator{opts: opts}
	c.mu.shards = make(map[int32]*shard)
	return c, nil
}

// ApplyImage starts a shard for each offsets partition this node leads
// (or restarts it on a new leader epoch) and stops the others. The node
// calls it after each metadata change.
func (c *Coordinator) ApplyImage(image *metadata.Image) {
	led := make(map[int32]int32)
	if t, ok := image.Topic(OffsetsTopic); ok {
		for p, st := range t.Partitions {
			if st.Leader == c.opts.NodeID {
				led[p] = st.LeaderEpoch
			}
		}
	}
	c.mu.Lock()
	if c.mu.closed {
		c.mu.Unlock()
		return
	}
	var stopping []*shard
	for p, s := range c.mu.shards {
		if epoch, ok := led[p]; !ok || epoch != s.epoch {
			stopping = append(stopping, s)
			delete(c.mu.shards, p)
		}
	}
	c.mu.Unlock()
	// Old shards stop before new ones start: a shard reloading its
	// partition on a new epoch must see every record the old one wrote.
	for _, s := range stopping {
		s.stop()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.closed {
		return
	}
	for p, epoch := range led {
		if _, ok := c.mu.shards[p]; !ok {
			c.mu.shards[p] = newShard(&c.opts, p, epoch)
		}
	}
}

// Close stops every shard.
func (c *Coordinator) Close() {
	c.mu.Lock()
	c.mu.closed = true
	shards := c.mu.shards
	c.mu.shards = nil
	c.mu.Unlock()
	for _, s := range shards {
		s.stop()
	}
}

// PartitionFor returns the offsets partition of a group: Kafka's
// Utils.abs(groupId.hashCode()) % partitionCount, with Java's String
// hashCode over UTF-16 code units.
func (c *Coordinator) PartitionFor(groupID string) int32 {
	return PartitionFor(groupID, c.numPartitions())
}

// PartitionFor maps a group id onto one of n partitions as Kafka does.
func PartitionFor(groupID string, n int32) int32 {
	h := javaStringHash(groupID)
	if h == -1<<31 {
		h = 0 // Kafka's Utils.abs maps Integer.MIN_VALUE to 0
	} else if h < 0 {
		h = -h
	}
	return h % n
}

func javaStringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			h = 31*h + int32(0xD800+(r>>10))
			h = 31*h + int32(0xDC00+(r&0x3FF))
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// numPartitions is the existing topic's partition count, else the
// configured one.
func (c *Coordinator) numPartitions() int32 {
	if t, ok := c.opts.Image().Topic(OffsetsTopic); ok && len(t.Partitions) > 0 {
		return int32(len(t.Partitions))
	}
	return c.opts.NumPartitions
}

// shardFor returns the group's shard, or the code to answer: NOT_COORDINATOR
// when this node does not lead the partition.
func (c *Coordinator) shardFor(groupID string) (*shard, int16) {
	p := c.PartitionFor(groupID)
	c.mu.Lock()
	s, ok := c.mu.shards[p]
	c.mu.Unlock()
	if !ok {
		return nil, kerr.NotCoordinator.Code
	}
	return s, 0
}

// Node is a coordinator's address for FindCoordinator.
type Node struct {
	NodeID int32
	Host   string
	Port   int32
}

// FindCoordinator returns the broker that coordinates groupID, as reached
// on listener; the offsets topic is created on first use. While it is being
// created or has no leader the answer is COORDINATOR_NOT_AVAILABLE.
func (c *Coordinator) FindCoordinator(ctx context.Context, groupID, listener string) (Node, int16) {
	image := c.opts.Image()
	t, ok := image.Topic(OffsetsTopic)
	if !ok {
		if err := c.createOffsetsTopic(ctx); err != nil {
			c.opts.Logger.Warn("creating the offsets topic", "err", err)
		}
		return Node{NodeID: -1, Port: -1}, kerr.CoordinatorNotAvailable.Code
	}
	p := PartitionFor(groupID, int32(len(t.Partitions)))
	st, ok := image.Partition(kafka.TopicPartition{Topic: OffsetsTopic, Partition: p})
	if !ok || st.Leader < 0 {
		return Node{NodeID: -1, Port: -1}, kerr.CoordinatorNotAvailable.Code
	}
	b, ok := image.Broker(st.Leader)
	if !ok || b.Fenced {
		return Node{NodeID: -1, Port: -1}, kerr.CoordinatorNotAvailable.Code
	}
	i := slices.IndexFunc(b.Endpoints, func(e metadata.Endpoint) bool { return e.Name == listener })
	if i < 0 {
		return Node{NodeID: -1, Port: -1}, kerr.CoordinatorNotAvailable.Code
	}
	return Node{NodeID: b.ID, Host: b.Endpoints[i].Host, Port: b.Endpoints[i].Port}, 0
}

func (c *Coordinator) createOffsetsTopic(ctx context.Context) error {
	if c.opts.CreateTopic == nil {
		return fmt.Errorf("no topic creator")
	}
	c.creating.Lock()
	defer c.creating.Unlock()
	if _, ok := c.opts.Image().Topic(OffsetsTopic); ok {
		return nil
	}
	// As in Kafka, a replication factor above the number of brokers makes
	// the creation fail (and FindCoordinator keep answering
	// COORDINATOR_NOT_AVAILABLE) until enough brokers are up.
	rf := c.opts.ReplicationFactor
	configs := map[string]string{
		"cleanup.policy":   "compact",
		"compression.type": "producer",
		"segment.bytes":    fmt.Sprint(c.opts.SegmentBytes),
	}
	err := c.opts.CreateTopic(ctx, OffsetsTopic, c.opts.NumPartitions, rf, configs)
	if err != nil {
		return fmt.Errorf("creating %s: %w", OffsetsTopic, err)
	}
	return nil
}
