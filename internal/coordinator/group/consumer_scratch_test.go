package group

import (
	"testing"
	"time"

	"sluice/internal/kafka"
)

type testTopics struct {
	byName  map[string]TopicInfo
	version int64
}

func (t *testTopics) ByName(n string) (TopicInfo, bool) { ti, ok := t.byName[n]; return ti, ok }
func (t *testTopics) ByID(id kafka.UUID) (TopicInfo, bool) {
	for _, ti := range t.byName {
		if ti.ID == id {
			return ti, true
		}
	}
	return TopicInfo{}, false
}
func (t *testTopics) Names() []string {
	var out []string
	for n := range t.byName {
		out = append(out, n)
	}
	return out
}
func (t *testTopics) Version() int64 { return t.version }

func TestScratchTwoMembers(t *testing.T) {
	tt := &testTopics{byName: map[string]TopicInfo{"t": {ID: kafka.UUID{1}, Name: "t", Partitions: 6}}, version: 1}
	cfg := DefaultConfig()
	cfg.Topics = func() Topics { return tt }
	now := time.Unix(1000, 0)
	m := NewManager(cfg, now)
	hb := func(req ConsumerHeartbeatRequest) ConsumerHeartbeatResult {
		var res ConsumerHeartbeatResult
		m.ConsumerHeartbeat(now, req, func(r ConsumerHeartbeatResult) { res = r })
		for _, w := range m.TakeWrites() {
			if w.Done != nil {
				w.Done(nil)
			}
		}
		t.Logf("%+v", res)
		return res
	}
	id := kafka.UUID{1}
	hb(ConsumerHeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: 0, RebalanceTimeoutMs: 1000, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}})
	hb(ConsumerHeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: 1, RebalanceTimeoutMs: 1000, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{{TopicID: id, Partitions: []int32{0, 1, 2, 3, 4, 5}}}})
	hb(ConsumerHeartbeatRequest{GroupID: "g", MemberID: "b", MemberEpoch: 0, RebalanceTimeoutMs: 1000, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}})
	hb(ConsumerHeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: 1, RebalanceTimeoutMs: -1})
	hb(ConsumerHeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: 1, RebalanceTimeoutMs: 1000, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{{TopicID: id, Partitions: []int32{0, 1, 2}}}})
	hb(ConsumerHeartbeatRequest{GroupID: "g", MemberID: "b", MemberEpoch: 2, RebalanceTimeoutMs: 1000, SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}})
	t.Logf("%+v", m.DescribeConsumerGroup("g"))
}
