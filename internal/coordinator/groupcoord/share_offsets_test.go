package groupcoord

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/kafka"
)

type spKey struct {
	group     string
	topic     kafka.UUID
	partition int32
}

// stateStore is a share coordinator in memory: the share state of
// partitions, the end offsets of the topic "t", and failures to inject.
type stateStore struct {
	mu       sync.Mutex
	states   map[spKey]group.ShareStateSummary
	ends     map[int32]int64
	failInit map[int32]error // InitializeStateAt of a partition of t
	failDel  error
	failEnd  error
	deletes  []group.ShareStateRequest
}

func newStateStore() *stateStore {
	return &stateStore{states: map[spKey]group.ShareStateSummary{}, ends: map[int32]int64{}, failInit: map[int32]error{}}
}

func (s *stateStore) InitializeState(_ context.Context, req group.ShareStateRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			s.states[spKey{req.GroupID, t.TopicID, p}] = group.ShareStateSummary{StateEpoch: req.GroupEpoch, StartOffset: -1, DeliveryCompleteCount: -1}
		}
	}
	return nil
}

func (s *stateStore) DeleteState(_ context.Context, req group.ShareStateRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deletes = append(s.deletes, req)
	if s.failDel != nil {
		return s.failDel
	}
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			delete(s.states, spKey{req.GroupID, t.TopicID, p})
		}
	}
	return nil
}

func (s *stateStore) ReadStateSummary(_ context.Context, groupID string, topicID kafka.UUID, partition int32) (group.ShareStateSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if topicID == (kafka.UUID{9}) && partition >= 2 {
		return group.ShareStateSummary{}, fmt.Errorf("read summary: %w", kerr.UnknownTopicOrPartition)
	}
	st, ok := s.states[spKey{groupID, topicID, partition}]
	if !ok {
		return group.ShareStateSummary{StartOffset: -1, DeliveryCompleteCount: -1}, nil
	}
	return st, nil
}

func (s *stateStore) InitializeStateAt(_ context.Context, groupID string, topicID kafka.UUID, partition, stateEpoch int32, startOffset int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.failInit[partition]; err != nil {
		return err
	}
	s.states[spKey{groupID, topicID, partition}] = group.ShareStateSummary{StateEpoch: stateEpoch, StartOffset: startOffset, DeliveryCompleteCount: 0}
	return nil
}

func (s *stateStore) LatestOffset(_ context.Context, topic string, partition int32) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if topic != "t" {
		return 0, fmt.Errorf("no topic %q", topic)
	}
	if s.failEnd != nil {
		return 0, s.failEnd
	}
	return s.ends[partition], nil
}

func (s *stateStore) set(partition int32, st group.ShareStateSummary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states[spKey{"sg", kafka.UUID{9}, partition}] = st
}

func (s *stateStore) get(partition int32) group.ShareStateSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.states[spKey{"sg", kafka.UUID{9}, partition}]
}

// offsetsLine prints a describe answer compactly.
func offsetsLine(d group.ShareGroupOffsets) string {
	if d.ErrorCode != 0 {
		return fmt.Sprintf("error %d", d.ErrorCode)
	}
	out := ""
	for _, t := range d.Topics {
		for _, p := range t.Partitions {
			out += fmt.Sprintf("%s(%v)/%d start=%d epoch=%d lag=%d err=%d;", t.TopicName, t.TopicID != kafka.UUID{}, p.Partition, p.StartOffset, p.LeaderEpoch, p.Lag, p.ErrorCode)
		}
	}
	return out
}

// TestShareGroupOffsetsDescribe: start offsets and lag of the initialized
// partitions, or of listed ones, from the state summaries and the end
// offsets (Kafka 4.4's describeShareGroupOffsets and
// describeShareGroupAllOffsets).
func TestShareGroupOffsetsDescribe(t *testing.T) {
	s := newStateStore()
	c := startShareCoordinator(t, runtimetest.NewMemLog(), s)
	ctx := context.Background()
	if got := offsetsLine(c.DescribeShareGroupOffsets(ctx, "sg", nil)); got != "" {
		t.Fatalf("unknown group, all topics: %q", got)
	}
	c.ShareGroupHeartbeat(ctx, shareHB("m1", 0, "t"))
	c.share.inflight.Wait()
	want := "t(true)/0 start=-1 epoch=0 lag=-1 err=0;t(true)/1 start=-1 epoch=0 lag=-1 err=0;"
	if got := offsetsLine(c.DescribeShareGroupOffsets(ctx, "sg", nil)); got != want {
		t.Fatalf("initialized, no offsets yet:\n got %s\nwant %s", got, want)
	}
	s.set(0, group.ShareStateSummary{StartOffset: 10, LeaderEpoch: 3, DeliveryCompleteCount: 2})
	s.set(1, group.ShareStateSummary{StartOffset: 5, LeaderEpoch: 3, DeliveryCompleteCount: -1})
	s.ends[0], s.ends[1] = 20, 9
	want = "t(true)/0 start=10 epoch=3 lag=8 err=0;t(true)/1 start=5 epoch=3 lag=-1 err=0;"
	if got := offsetsLine(c.DescribeShareGroupOffsets(ctx, "sg", nil)); got != want {
		t.Fatalf("with offsets:\n got %s\nwant %s", got, want)
	}
	// Listed topics: a partition the share coordinator refuses answers -1
	// without error; a topic the image lacks answers -1 with a zero id,
	// after the others.
	got := offsetsLine(c.DescribeShareGroupOffsets(ctx, "sg", []group.ShareOffsetsTopic{{TopicName: "nope", Partitions: []int32{0}}, {TopicName: "t", Partitions: []int32{0, 5}}}))
	want = "t(true)/0 start=10 epoch=3 lag=8 err=0;t(true)/5 start=-1 epoch=0 lag=-1 err=0;nope(false)/0 start=-1 epoch=0 lag=-1 err=0;"
	if got != want {
		t.Fatalf("listed:\n got %s\nwant %s", got, want)
	}
	s.failEnd = kerr.NotLeaderForPartition
	got = offsetsLine(c.DescribeShareGroupOffsets(ctx, "sg", []group.ShareOffsetsTopic{{TopicName: "t", Partitions: []int32{0}}}))
	if want := fmt.Sprintf("t(true)/0 start=0 epoch=0 lag=-1 err=%d;", kerr.NotLeaderForPartition.Code); got != want {
		t.Fatalf("end offset failure:\n got %s\nwant %s", got, want)
	}
	// A persister without the offsets methods cannot describe.
	c2 := startShareCoordinator(t, runtimetest.NewMemLog(), &fakePersister{})
	c2.ShareGroupHeartbeat(ctx, shareHB("m1", 0, "t"))
	c2.share.inflight.Wait()
	if d := c2.DescribeShareGroupOffsets(ctx, "sg", nil); d.ErrorCode != kerr.UnknownServerError.Code {
		t.Fatalf("without offsets persister: %+v", d)
	}
}

// TestShareGroupOffsetsAlter: only an empty group; the share state is
// initialized at the new offsets with the group epoch, the partitions
// recorded as initialized; a refused partition carries its error.
func TestShareGroupOffsetsAlter(t *testing.T) {
	s := newStateStore()
	c := startShareCoordinator(t, runtimetest.NewMemLog(), s)
	ctx := context.Background()
	alter := []group.ShareOffsetsAlterTopic{{TopicName: "t", Partitions: []group.ShareOffsetsAlterPartition{{Partition: 0, StartOffset: 3}, {Partition: 1, StartOffset: 4}, {Partition: 7, StartOffset: 1}}}}
	if r := c.AlterShareGroupOffsets(ctx, "", alter); r.ErrorCode != kerr.InvalidGroupID.Code {
		t.Fatalf("empty group id: %+v", r)
	}
	c.ShareGroupHeartbeat(ctx, shareHB("m1", 0, "t"))
	c.share.inflight.Wait()
	if r := c.AlterShareGroupOffsets(ctx, "sg", alter); r.ErrorCode != kerr.NonEmptyGroup.Code || r.ErrorMessage == nil {
		t.Fatalf("with a member: %+v", r)
	}
	c.ShareGroupHeartbeat(ctx, shareHB("m1", -1))
	epoch := c.ShareGroupDescribe(ctx, "sg").GroupEpoch
	r := c.AlterShareGroupOffsets(ctx, "sg", alter)
	if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 3 || r.Topics[0].TopicID != (kafka.UUID{9}) {
		t.Fatalf("alter: %+v", r)
	}
	if p := r.Topics[0].Partitions; p[0].ErrorCode != 0 || p[1].ErrorCode != 0 || p[2].ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("alter partitions: %+v", p)
	}
	if st := s.get(0); st.StartOffset != 3 || st.StateEpoch != epoch {
		t.Fatalf("state of t/0: %+v, want start 3 at state epoch %d", st, epoch)
	}
	s.ends[0], s.ends[1] = 10, 4
	want := "t(true)/0 start=3 epoch=0 lag=7 err=0;t(true)/1 start=4 epoch=0 lag=0 err=0;"
	if got := offsetsLine(c.DescribeShareGroupOffsets(ctx, "sg", nil)); got != want {
		t.Fatalf("after alter:\n got %s\nwant %s", got, want)
	}
	// The share coordinator refuses one partition: it alone carries the
	// error.
	s.failInit[1] = fmt.Errorf("initialize: %w", kerr.FencedStateEpoch)
	r = c.AlterShareGroupOffsets(ctx, "sg", alter[:1])
	if p := r.Topics[0].Partitions; r.ErrorCode != 0 || p[0].ErrorCode != 0 || p[1].ErrorCode != kerr.FencedStateEpoch.Code || p[1].ErrorMessage == nil {
		t.Fatalf("refused partition: %+v", r)
	}
	// A new group is created empty and altered.
	r = c.AlterShareGroupOffsets(ctx, "fresh", []group.ShareOffsetsAlterTopic{{TopicName: "t", Partitions: []group.ShareOffsetsAlterPartition{{Partition: 0, StartOffset: 1}}}})
	if r.ErrorCode != 0 {
		t.Fatalf("alter of a new group: %+v", r)
	}
	if d := c.ShareGroupDescribe(ctx, "fresh"); d.ErrorCode != 0 || d.State != "Empty" {
		t.Fatalf("new group: %+v", d)
	}
}

// TestShareGroupOffsetsDelete: whole topics' state deleted from an empty
// group; the deleted topics are no longer described; a persister failure
// is the topic's error and the topic is deleted again next time.
func TestShareGroupOffsetsDelete(t *testing.T) {
	s := newStateStore()
	c := startShareCoordinator(t, runtimetest.NewMemLog(), s)
	ctx := context.Background()
	if r := c.DeleteShareGroupOffsets(ctx, "sg", []string{"t"}); r.ErrorCode != kerr.GroupIDNotFound.Code || *r.ErrorMessage != "Group sg not found." {
		t.Fatalf("unknown group: %+v", r)
	}
	c.ShareGroupHeartbeat(ctx, shareHB("m1", 0, "t"))
	c.share.inflight.Wait()
	if r := c.DeleteShareGroupOffsets(ctx, "sg", []string{"t"}); r.ErrorCode != kerr.NonEmptyGroup.Code {
		t.Fatalf("with a member: %+v", r)
	}
	c.ShareGroupHeartbeat(ctx, shareHB("m1", -1))
	s.failDel = kerr.CoordinatorLoadInProgress
	r := c.DeleteShareGroupOffsets(ctx, "sg", []string{"t", "nope"})
	if r.ErrorCode != 0 || len(r.Topics) != 2 || r.Topics[0].TopicName != "nope" || r.Topics[1].ErrorCode != kerr.CoordinatorLoadInProgress.Code || r.Topics[1].TopicID != (kafka.UUID{9}) {
		t.Fatalf("persister failure: %+v", r)
	}
	s.failDel = nil
	r = c.DeleteShareGroupOffsets(ctx, "sg", []string{"t"})
	if r.ErrorCode != 0 || len(r.Topics) != 1 || r.Topics[0].ErrorCode != 0 || r.Topics[0].TopicName != "t" {
		t.Fatalf("delete: %+v", r)
	}
	if n := len(s.deletes); n != 2 || len(s.deletes[1].Topics[0].Partitions) != 2 {
		t.Fatalf("persister deletes: %+v", s.deletes)
	}
	if got := offsetsLine(c.DescribeShareGroupOffsets(ctx, "sg", nil)); got != "" {
		t.Fatalf("described after delete: %q", got)
	}
	r = c.DeleteShareGroupOffsets(ctx, "sg", []string{"t"})
	if len(r.Topics) != 1 || r.Topics[0].ErrorCode != kerr.UnknownTopicOrPartition.Code || *r.Topics[0].ErrorMessage != "There is no offset information to delete." {
		t.Fatalf("second delete: %+v", r)
	}
}
