package group

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// A consumer group with dynamic configs (the GROUP config resource) gets
// its own heartbeat interval, and its members' sessions last its own
// session timeout; another group keeps the broker's.
func TestConsumerGroupConfigsOverrideTimeouts(t *testing.T) {
	topics := benchTopics{"t": {ID: kafka.UUID{1}, Name: "t", Partitions: 1}}
	cfg := DefaultConfig()
	cfg.Topics = func() Topics { return topics }
	cfg.GroupConfigs = func(id string) map[string]string {
		if id == "tuned" {
			return map[string]string{"consumer.session.timeout.ms": "50000"}
		}
		return nil
	}
	cfg.ResolveConsumerTimeouts = func(map[string]string) (time.Duration, time.Duration) { return 50 * time.Second, 7 * time.Second }
	now := time.Unix(1000, 0)
	m := NewManager(cfg, now)
	join := func(group string) ConsumerHeartbeatResult {
		var res ConsumerHeartbeatResult
		m.ConsumerHeartbeat(now, ConsumerHeartbeatRequest{GroupID: group, MemberID: "a", RebalanceTimeoutMs: 60000,
			SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}}, func(r ConsumerHeartbeatResult) { res = r })
		for _, w := range m.TakeWrites() {
			w.Done(nil)
		}
		if res.ErrorCode != 0 {
			t.Fatalf("%s: heartbeat error %d", group, res.ErrorCode)
		}
		return res
	}
	if got := join("tuned").HeartbeatInterval; got != 7*time.Second {
		t.Fatalf("tuned group's heartbeat interval %v, want its own 7s", got)
	}
	if got := join("plain").HeartbeatInterval; got != 5*time.Second {
		t.Fatalf("plain group's heartbeat interval %v, want the broker's 5s", got)
	}
	// After 46 s without heartbeats the plain group's member is gone (45 s
	// session), the tuned group's is not (50 s); after 51 s both are.
	m.Tick(now.Add(46 * time.Second))
	m.TakeWrites()
	if _, ok := m.groups["plain"].cg.members["a"]; ok {
		t.Fatal("plain member outlived the broker's 45s session")
	}
	if _, ok := m.groups["tuned"].cg.members["a"]; !ok {
		t.Fatal("tuned member expired before its group's 50s session")
	}
	m.Tick(now.Add(51 * time.Second))
	m.TakeWrites()
	if _, ok := m.groups["tuned"].cg.members["a"]; ok {
		t.Fatal("tuned member outlived its group's 50s session")
	}
}
