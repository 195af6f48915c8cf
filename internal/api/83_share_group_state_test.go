package api

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/coordinator/sharecoord"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
)

// countingSharePlane counts the requests that reach the coordinator.
type countingSharePlane struct {
	SharePlane
	calls atomic.Int32
}

func (c *countingSharePlane) InitializeState(ctx context.Context, r *kmsg.InitializeShareGroupStateRequest) *kmsg.InitializeShareGroupStateResponse {
	c.calls.Add(1)
	return c.SharePlane.InitializeState(ctx, r)
}

func (c *countingSharePlane) ReadState(ctx context.Context, r *kmsg.ReadShareGroupStateRequest) *kmsg.ReadShareGroupStateResponse {
	c.calls.Add(1)
	return c.SharePlane.ReadState(ctx, r)
}

func (c *countingSharePlane) WriteState(ctx context.Context, r *kmsg.WriteShareGroupStateRequest) *kmsg.WriteShareGroupStateResponse {
	c.calls.Add(1)
	return c.SharePlane.WriteState(ctx, r)
}

func (c *countingSharePlane) DeleteState(ctx context.Context, r *kmsg.DeleteShareGroupStateRequest) *kmsg.DeleteShareGroupStateResponse {
	c.calls.Add(1)
	return c.SharePlane.DeleteState(ctx, r)
}

func (c *countingSharePlane) ReadStateSummary(ctx context.Context, r *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse {
	c.calls.Add(1)
	return c.SharePlane.ReadStateSummary(ctx, r)
}

// shareStateImage has __share_group_state (one partition led by node 1)
// and topic "orders" (id {7}, two partitions).
func shareStateImage(t *testing.T) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	recs := []metadata.Record{
		&metadata.RegisterBrokerRecord{BrokerID: 1, BrokerEpoch: 1, Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "localhost", Port: 9092}}},
		&metadata.TopicRecord{Name: sharecoord.ShareGroupStateTopic, TopicID: kafka.UUID{1}},
		&metadata.PartitionRecord{TopicID: kafka.UUID{1}, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 1},
		&metadata.TopicRecord{Name: "orders", TopicID: kafka.UUID{7}},
		&metadata.PartitionRecord{TopicID: kafka.UUID{7}, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
		&metadata.PartitionRecord{TopicID: kafka.UUID{7}, Partition: 1, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1},
	}
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply()
}

// TestShareGroupStateHandlers drives the five state APIs through their
// handlers onto a share coordinator over an in-memory log: a principal with
// CLUSTER_ACTION is served, one without is refused on every partition
// with CLUSTER_AUTHORIZATION_FAILED and the coordinator is not asked.
func TestShareGroupStateHandlers(t *testing.T) {
	im := shareStateImage(t)
	c, err := sharecoord.New(sharecoord.Options{NodeID: 1, NumPartitions: 1, Writer: runtimetest.NewMemLog(),
		Image: func() *metadata.Image { return im }, TickInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	c.ApplyImage(im)
	sp := &countingSharePlane{SharePlane: c}

	az := stubAuthorizer{}
	az[az.key(auth.User("broker"), metadata.ACLOpClusterAction, metadata.ACLResourceCluster, metadata.ACLClusterName)] = true
	conn := func(user string) *ConnState {
		return &ConnState{Principal: auth.User(user), RemoteAddr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1)}}
	}
	handle := func(h Handler, user string, body kmsg.Request) kmsg.Response {
		return h.Handle(t.Context(), &Request{Body: body, Conn: conn(user), authz: az}).body
	}
	topic := [16]byte{7}

	summary := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	summary.SetVersion(1)
	summary.GroupID = "g"
	st := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	st.TopicID = topic
	st.Partitions = []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: 0}}
	summary.Topics = append(summary.Topics, st)
	testutil.Eventually(t, 5*time.Second, func() bool {
		r := handle(newReadShareGroupStateSummaryHandler(sp), "broker", summary).(*kmsg.ReadShareGroupStateSummaryResponse)
		return r.Topics[0].Partitions[0].ErrorCode == 0
	}, "the share coordinator never loaded")

	init := kmsg.NewPtrInitializeShareGroupStateRequest()
	init.GroupID = "g"
	it := kmsg.NewInitializeShareGroupStateRequestTopic()
	it.TopicID = topic
	it.Partitions = []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 0, StateEpoch: 1, StartOffset: 10}, {Partition: 1, StateEpoch: 1, StartOffset: 0}}
	init.Topics = append(init.Topics, it)

	write := kmsg.NewPtrWriteShareGroupStateRequest()
	write.SetVersion(1)
	write.GroupID = "g"
	wt := kmsg.NewWriteShareGroupStateRequestTopic()
	wt.TopicID = topic
	wp := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	wp.Partition, wp.StateEpoch, wp.LeaderEpoch, wp.StartOffset, wp.DeliveryCompleteCount = 0, 1, 3, 12, 2
	wp.StateBatches = []kmsg.WriteShareGroupStateRequestTopicPartitionStateBatch{{FirstOffset: 12, LastOffset: 15, DeliveryState: 2, DeliveryCount: 1}}
	wt.Partitions = append(wt.Partitions, wp)
	write.Topics = append(write.Topics, wt)

	read := kmsg.NewPtrReadShareGroupStateRequest()
	read.GroupID = "g"
	rt := kmsg.NewReadShareGroupStateRequestTopic()
	rt.TopicID = topic
	rt.Partitions = []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: 0, LeaderEpoch: 3}, {Partition: 1, LeaderEpoch: 0}}
	read.Topics = append(read.Topics, rt)

	del := kmsg.NewPtrDeleteShareGroupStateRequest()
	del.GroupID = "g"
	dt := kmsg.NewDeleteShareGroupStateRequestTopic()
	dt.TopicID = topic
	dt.Partitions = []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: 1}}
	del.Topics = append(del.Topics, dt)

	// Refused: nothing reaches the coordinator.
	before := sp.calls.Load()
	refused := []struct {
		h    Handler
		body kmsg.Request
	}{
		{newInitializeShareGroupStateHandler(sp), init}, {newWriteShareGroupStateHandler(sp), write},
		{newReadShareGroupStateHandler(sp), read}, {newDeleteShareGroupStateHandler(sp), del},
		{newReadShareGroupStateSummaryHandler(sp), summary},
	}
	for _, c := range refused {
		codes := shareStateCodes(handle(c.h, "alice", c.body))
		if len(codes) == 0 {
			t.Fatalf("key %d refused: no partitions", c.h.Key)
		}
		for _, code := range codes {
			if code != kerr.ClusterAuthorizationFailed.Code {
				t.Errorf("key %d refused: code %d", c.h.Key, code)
			}
		}
	}
	if sp.calls.Load() != before {
		t.Fatal("a refused request reached the coordinator")
	}

	// Served.
	for _, c := range refused[:2] {
		for _, code := range shareStateCodes(handle(c.h, "broker", c.body)) {
			if code != 0 {
				t.Fatalf("key %d: %v", c.h.Key, kerr.ErrorForCode(code))
			}
		}
	}
	r := handle(newReadShareGroupStateHandler(sp), "broker", read).(*kmsg.ReadShareGroupStateResponse)
	p0, p1 := r.Topics[0].Partitions[0], r.Topics[0].Partitions[1]
	if p0.ErrorCode != 0 || p0.StartOffset != 12 || p0.StateEpoch != 1 || len(p0.StateBatches) != 1 || p0.StateBatches[0].LastOffset != 15 {
		t.Fatalf("read partition 0: %+v", p0)
	}
	if p1.ErrorCode != 0 || p1.StartOffset != 0 || len(p1.StateBatches) != 0 {
		t.Fatalf("read partition 1: %+v", p1)
	}
	if codes := shareStateCodes(handle(newDeleteShareGroupStateHandler(sp), "broker", del)); codes[0] != 0 {
		t.Fatalf("delete: %v", kerr.ErrorForCode(codes[0]))
	}
	s := handle(newReadShareGroupStateSummaryHandler(sp), "broker", summary).(*kmsg.ReadShareGroupStateSummaryResponse).Topics[0].Partitions[0]
	if s.ErrorCode != 0 || s.StartOffset != 12 || s.DeliveryCompleteCount != 2 || s.StateEpoch != 1 {
		t.Fatalf("summary: %+v", s)
	}
}

// shareStateCodes lists the partition codes of a share-group state answer.
func shareStateCodes(resp kmsg.Response) []int16 {
	var codes []int16
	switch r := resp.(type) {
	case *kmsg.InitializeShareGroupStateResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	case *kmsg.WriteShareGroupStateResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	case *kmsg.ReadShareGroupStateResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	case *kmsg.DeleteShareGroupStateResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	case *kmsg.ReadShareGroupStateSummaryResponse:
		for _, t := range r.Topics {
			for _, p := range t.Partitions {
				codes = append(codes, p.ErrorCode)
			}
		}
	}
	return codes
}
