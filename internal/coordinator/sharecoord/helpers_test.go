package sharecoord

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/coordinator/share"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
)

const (
	self  int32 = 1
	other int32 = 2
)

// dataTopic is the topic whose share partitions the tests keep state of.
var dataTopic = kafka.UUID{0xd, 0xa, 0x7a}

// cluster is the metadata a test changes.
type cluster struct {
	stateLeader, stateEpoch int32
	noStateTopic            bool
	noDataTopic             bool
	brokers                 []int32 // nil: self and other
}

func (c cluster) image(t *testing.T) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	brokers := c.brokers
	if brokers == nil {
		brokers = []int32{self, other}
	}
	var recs []metadata.Record
	for _, id := range brokers {
		recs = append(recs, &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1,
			Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9090 + id}}})
	}
	if !c.noStateTopic {
		recs = append(recs, &metadata.TopicRecord{Name: ShareGroupStateTopic, TopicID: kafka.UUID{1}},
			&metadata.PartitionRecord{TopicID: kafka.UUID{1}, Partition: 0, Replicas: []int32{self, other},
				ISR: []int32{self, other}, Leader: c.stateLeader, LeaderEpoch: c.stateEpoch})
	}
	if !c.noDataTopic {
		recs = append(recs, &metadata.TopicRecord{Name: "orders", TopicID: dataTopic})
		for p := range int32(2) {
			recs = append(recs, &metadata.PartitionRecord{TopicID: dataTopic, Partition: p,
				Replicas: []int32{self}, ISR: []int32{self}, Leader: self})
		}
	}
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	return d.Apply()
}

// created records the topic creations a coordinator asked for.
type created struct {
	mu    sync.Mutex
	calls []creation
}

type creation struct {
	name       string
	partitions int32
	rf         int16
	configs    map[string]string
}

func (c *created) create(_ context.Context, name string, partitions int32, rf int16, configs map[string]string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, creation{name, partitions, rf, configs})
	return nil
}

// env is a coordinator over an in-memory log.
type env struct {
	t       *testing.T
	deleted chan [2]int64 // DeleteRecords calls: partition, offset
	log     *runtimetest.MemLog
	clk     clock.Clock
	image   atomic.Pointer[metadata.Image]
	created *created
	c       *ShareCoordinator
}

func newEnv(t *testing.T, cl cluster) *env {
	t.Helper()
	e := &env{t: t, log: runtimetest.NewMemLog(), clk: clock.Real{}, created: &created{}, deleted: make(chan [2]int64, 100)}
	e.image.Store(cl.image(t))
	e.c = e.newCoordinator()
	return e
}

func (e *env) newCoordinator() *ShareCoordinator {
	e.t.Helper()
	cfg := share.DefaultConfig()
	cfg.SnapshotUpdateRecordsPerSnapshot = 2
	c, err := New(Options{NodeID: self, Share: cfg, NumPartitions: 1, Writer: e.log, Image: e.image.Load,
		CreateTopic: e.created.create, Clock: e.clk, TickInterval: time.Millisecond,
		PruneInterval: 5 * time.Millisecond, DeleteRecords: func(_ context.Context, partition int32, before int64) error {
			e.deleted <- [2]int64{int64(partition), before}
			return nil
		}})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(c.Close)
	c.ApplyImage(e.image.Load())
	return c
}

func (e *env) setCluster(cl cluster, cs ...*ShareCoordinator) {
	im := cl.image(e.t)
	e.image.Store(im)
	for _, c := range cs {
		c.ApplyImage(im)
	}
}

// waitLoaded waits until c serves the state partition.
func waitLoaded(t *testing.T, c *ShareCoordinator) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool {
		r := c.ReadStateSummary(context.Background(), summaryReq("probe", 0))
		code := r.Topics[0].Partitions[0].ErrorCode
		return code != 16 && code != 14 // NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS
	}, "the coordinator never loaded")
}

func initReq(group string, stateEpoch int32, start int64, partitions ...int32) *kmsg.InitializeShareGroupStateRequest {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = group
	t := kmsg.NewInitializeShareGroupStateRequestTopic()
	t.TopicID = dataTopic
	for _, p := range partitions {
		rp := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
		rp.Partition, rp.StateEpoch, rp.StartOffset = p, stateEpoch, start
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	return req
}

func writeReq(version int16, group string, partition, stateEpoch, leaderEpoch int32, start int64, batches ...share.StateBatch) *kmsg.WriteShareGroupStateRequest {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.SetVersion(version)
	req.GroupID = group
	t := kmsg.NewWriteShareGroupStateRequestTopic()
	t.TopicID = dataTopic
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset = partition, stateEpoch, leaderEpoch, start
	for _, b := range batches {
		sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
		sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount
		p.StateBatches = append(p.StateBatches, sb)
	}
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func readReq(group string, partition, leaderEpoch int32) *kmsg.ReadShareGroupStateRequest {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = group
	t := kmsg.NewReadShareGroupStateRequestTopic()
	t.TopicID = dataTopic
	p := kmsg.NewReadShareGroupStateRequestTopicPartition()
	p.Partition, p.LeaderEpoch = partition, leaderEpoch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func summaryReq(group string, partition int32) *kmsg.ReadShareGroupStateSummaryRequest {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.SetVersion(1)
	req.GroupID = group
	t := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	t.TopicID = dataTopic
	p := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	p.Partition = partition
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	return req
}

func deleteReq(group string, partitions ...int32) *kmsg.DeleteShareGroupStateRequest {
	req := kmsg.NewPtrDeleteShareGroupStateRequest()
	req.GroupID = group
	t := kmsg.NewDeleteShareGroupStateRequestTopic()
	t.TopicID = dataTopic
	for _, p := range partitions {
		rp := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
		rp.Partition = p
		t.Partitions = append(t.Partitions, rp)
	}
	req.Topics = append(req.Topics, t)
	return req
}
