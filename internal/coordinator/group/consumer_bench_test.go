package group

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// BenchmarkConsumerHeartbeatSteady is a keep-alive heartbeat of a member of
// a stable group of 10 members over 100 partitions: the cost the
// coordinator pays per member per heartbeat interval.
func BenchmarkConsumerHeartbeatSteady(b *testing.B) {
	tt := benchTopics{"t": {ID: kafka.UUID{1}, Name: "t", Partitions: 100}}
	cfg := DefaultConfig()
	cfg.Topics = func() Topics { return tt }
	now := time.Unix(1000, 0)
	m := NewManager(cfg, now)
	run := func(req ConsumerHeartbeatRequest) ConsumerHeartbeatResult {
		var res ConsumerHeartbeatResult
		m.ConsumerHeartbeat(now, req, func(r ConsumerHeartbeatResult) { res = r })
		for _, w := range m.TakeWrites() {
			if w.Done != nil {
				w.Done(nil)
			}
		}
		return res
	}
	owned := map[string][]TopicPartitions{}
	epochs := map[string]int32{}
	// Converge: every member heartbeats with what it was given until the
	// group is stable.
	for round := 0; round < 20; round++ {
		for i := 0; i < 10; i++ {
			id := fmt.Sprintf("m%d", i)
			req := ConsumerHeartbeatRequest{GroupID: "g", MemberID: id, MemberEpoch: epochs[id], RebalanceTimeoutMs: 60000, SubscribedTopicNames: []string{"t"}, Owned: owned[id]}
			if req.Owned == nil {
				req.Owned = []TopicPartitions{}
			}
			res := run(req)
			epochs[id] = res.MemberEpoch
			if res.Assignment != nil {
				owned[id] = res.Assignment
			}
		}
	}
	if d := m.DescribeConsumerGroup("g"); d.State != cgStable {
		b.Fatalf("group %s, want Stable", d.State)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		id := fmt.Sprintf("m%d", i%10)
		res := run(ConsumerHeartbeatRequest{GroupID: "g", MemberID: id, MemberEpoch: epochs[id], RebalanceTimeoutMs: -1})
		if res.ErrorCode != 0 {
			b.Fatal(res.ErrorCode)
		}
	}
}

// benchTopics is a fixed set of topics.
type benchTopics map[string]TopicInfo

func (t benchTopics) ByName(n string) (TopicInfo, bool) { ti, ok := t[n]; return ti, ok }
func (t benchTopics) ByID(id kafka.UUID) (TopicInfo, bool) {
	for _, ti := range t {
		if ti.ID == id {
			return ti, true
		}
	}
	return TopicInfo{}, false
}
func (t benchTopics) Names() []string {
	var out []string
	for n := range t {
		out = append(out, n)
	}
	return out
}
func (t benchTopics) Version() int64 { return 1 }
