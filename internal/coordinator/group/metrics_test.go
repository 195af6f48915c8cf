package group

import (
	"testing"

	"github.com/sluice-io/sluice/internal/kafka"
)

// TestManagerMetrics: consumer and classic groups counted by state with
// Kafka's names, offsets and members copied for lag, and counters that
// live operations move and a replay of the same records does not.
func TestManagerMetrics(t *testing.T) {
	h := newCDDHarness(t)
	h.topics = &cddTopics{byName: map[string]TopicInfo{"t": {ID: kafka.UUID{15: 1}, Name: "t", Partitions: 2}}, version: 2}
	var res ConsumerHeartbeatResult
	h.mgr.ConsumerHeartbeat(h.now, ConsumerHeartbeatRequest{GroupID: "cg", RebalanceTimeoutMs: 1000,
		SubscribedTopicNames: []string{"t"}, Owned: []TopicPartitions{}}, func(r ConsumerHeartbeatResult) { res = r })
	h.settle()
	if res.ErrorCode != 0 {
		t.Fatalf("join: %+v", res)
	}
	tp := kafka.TopicPartition{Topic: "t", Partition: 1}
	var codes CommitResult
	h.mgr.CommitOffsets(h.now, CommitRequest{GroupID: "simple", GenerationID: -1,
		Partitions: []CommitPartition{{TP: tp, Offset: 9, LeaderEpoch: -1}}}, func(r CommitResult) { codes = r })
	h.settle()
	if codes.Errors[0] != 0 {
		t.Fatalf("commit: %v", codes.Errors)
	}

	s := h.mgr.Metrics(true)
	cgState := h.mgr.groups["cg"].cg.state()
	if s.ConsumerGroups[cgState] != 1 || len(s.ConsumerGroups) != 1 || s.ClassicGroups[Empty] != 1 || s.Offsets != 1 {
		t.Fatalf("counts: %+v (consumer group state %s)", s, cgState)
	}
	if want := (Counters{ConsumerRebalances: 1, OffsetCommits: 1}); s.Counters != want {
		t.Fatalf("counters %+v, want %+v", s.Counters, want)
	}
	var simple, cg *GroupOffsets
	for i := range s.Groups {
		switch s.Groups[i].GroupID {
		case "simple":
			simple = &s.Groups[i]
		case "cg":
			cg = &s.Groups[i]
		}
	}
	if simple == nil || simple.Members != 0 || len(simple.Offsets) != 1 || simple.Offsets[0] != (CommittedOffset{Partition: tp, Offset: 9}) {
		t.Fatalf("simple group: %+v", simple)
	}
	if cg == nil || cg.Members != 1 || len(cg.Offsets) != 0 {
		t.Fatalf("consumer group: %+v", cg)
	}
	if s := h.mgr.Metrics(false); s.Groups != nil {
		t.Fatalf("offsets copied when not asked: %+v", s.Groups)
	}

	fresh := h.replayed()
	h.mgr.ExpireOffsets(h.now.Add(h.cfg.OffsetsRetention))
	h.settle()
	if got := h.mgr.Metrics(false); got.Counters.OffsetExpirations != 1 || got.Offsets != 0 {
		t.Fatalf("after expiry: %+v", got)
	}

	r := fresh.Metrics(false)
	if r.Counters != (Counters{}) {
		t.Fatalf("a replay counted %+v", r.Counters)
	}
	if r.ConsumerGroups[cgState] != 1 || r.ClassicGroups[Empty] != 1 || r.Offsets != 1 {
		t.Fatalf("replayed counts: %+v", r)
	}
}
