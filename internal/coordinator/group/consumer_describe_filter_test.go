package group

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// A regex resolves only to the topics the member may DESCRIBE (Kafka 4.1+
// filters them with the requester's authorizer context).
func TestConsumerRegexKeepsDescribableTopics(t *testing.T) {
	topics := benchTopics{
		"orders-eu": {ID: kafka.UUID{1}, Name: "orders-eu", Partitions: 2},
		"orders-us": {ID: kafka.UUID{2}, Name: "orders-us", Partitions: 2},
	}
	cfg := DefaultConfig()
	cfg.Topics = func() Topics { return topics }
	now := time.Unix(1000, 0)
	m := NewManager(cfg, now)
	regex := "orders-.*"
	var res ConsumerHeartbeatResult
	m.ConsumerHeartbeat(now, ConsumerHeartbeatRequest{
		GroupID: "g", MemberID: "a", RebalanceTimeoutMs: 60000, SubscribedTopicRegex: &regex, Owned: []TopicPartitions{},
		CanDescribe: func(topic string) bool { return topic != "orders-us" },
	}, func(r ConsumerHeartbeatResult) { res = r })
	for _, w := range m.TakeWrites() {
		w.Done(nil)
	}
	if res.ErrorCode != 0 || len(res.Assignment) != 1 || res.Assignment[0].TopicID != (kafka.UUID{1}) {
		t.Fatalf("answer %+v, want orders-eu alone", res)
	}
	if got := m.groups["g"].cg.regexes[regex].topics; len(got) != 1 || got[0] != "orders-eu" {
		t.Fatalf("the regex resolved to %v, want [orders-eu]", got)
	}
}
