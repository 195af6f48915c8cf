package group

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// TestShareRandomOperations drives share groups with random heartbeats,
// leaves, initializations, topic changes and clock moves, and checks after
// each step Kafka's invariants and that a reload from the log rebuilds
// exactly the live state.
func TestShareRandomOperations(t *testing.T) {
	for seed := range uint64(30) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { shareRandomRun(t, seed) })
	}
}

func shareRandomRun(t *testing.T, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 7))
	h := &sddHarness{cddHarness: newCDDHarness(t)}
	h.out = &strings.Builder{}
	h.topics = &cddTopics{byName: map[string]TopicInfo{
		"a": {ID: kafka.UUID{15: 1}, Name: "a", Partitions: 2},
		"b": {ID: kafka.UUID{15: 2}, Name: "b", Partitions: 3},
	}, version: 2}
	epochs := map[string]int32{}
	assignedSeen := false
	names := []string{"a", "b", "c"}
	for step := range 120 {
		member := fmt.Sprintf("m%d", r.IntN(7))
		switch op := r.IntN(10); {
		case op < 5:
			req := ShareHeartbeatRequest{GroupID: "g", MemberID: member, MemberEpoch: epochs[member], ClientID: "c"}
			if req.MemberEpoch == 0 || r.IntN(4) == 0 {
				req.SubscribedTopicNames = []string{names[r.IntN(3)], names[r.IntN(3)]}
			}
			var res ShareHeartbeatResult
			h.mgr.ShareHeartbeat(h.now, req, func(x ShareHeartbeatResult) { res = x })
			h.settle()
			if res.ErrorCode == 0 {
				epochs[member] = res.MemberEpoch
				assignedSeen = assignedSeen || len(res.Assignment) > 0
				if res.Initialize != nil {
					h.pending = append(h.pending, res.Initialize)
				}
			} else {
				delete(epochs, member)
			}
		case op == 5:
			h.mgr.ShareHeartbeat(h.now, ShareHeartbeatRequest{GroupID: "g", MemberID: member, MemberEpoch: -1}, func(ShareHeartbeatResult) {})
			h.settle()
			delete(epochs, member)
		case op == 6 && len(h.pending) > 0:
			req := h.pending[0]
			h.pending = h.pending[1:]
			if r.IntN(3) == 0 {
				h.mgr.ShareStateUninitialized(h.now, req.GroupID, req.Topics, nil)
			} else {
				h.mgr.ShareStateInitialized(h.now, req.GroupID, req.Topics, nil)
			}
			h.settle()
		case op == 7:
			next := &cddTopics{byName: map[string]TopicInfo{}, version: h.topics.version + 1}
			for n, ti := range h.topics.byName {
				next.byName[n] = ti
			}
			ti := next.byName["b"]
			ti.Partitions = min(ti.Partitions+1, 6)
			next.byName["b"] = ti
			if r.IntN(2) == 0 {
				next.byName["c"] = TopicInfo{ID: kafka.UUID{15: 3}, Name: "c", Partitions: 1}
			}
			h.topics = next
		default:
			h.now = h.now.Add(time.Duration(r.IntN(20)) * time.Second)
			h.mgr.Tick(h.now)
			h.settle()
		}
		checkShareInvariants(t, h.mgr, step)
		if step%10 == 9 {
			fresh := h.replayed()
			for _, id := range sortedShareIDs(h.mgr.share) {
				if live, loaded := h.dumpShare(h.mgr, id), h.dumpShare(fresh, id); live != loaded {
					t.Fatalf("step %d: reload differs:\nlive:\n%s\nloaded:\n%s", step, live, loaded)
				}
			}
			if len(fresh.share) != len(h.mgr.share) {
				t.Fatalf("step %d: reload has %d share groups, live %d", step, len(fresh.share), len(h.mgr.share))
			}
		}
	}
	if !assignedSeen {
		t.Fatal("no heartbeat was ever assigned a partition: the run tests nothing")
	}
}

func checkShareInvariants(t *testing.T, m *Manager, step int) {
	t.Helper()
	for id, sg := range m.share {
		if _, clash := m.groups[id]; clash {
			t.Fatalf("step %d: %s is both a share group and another group", step, id)
		}
		if sg.assignmentEpoch > sg.groupEpoch {
			t.Fatalf("step %d: assignment epoch %d past group epoch %d", step, sg.assignmentEpoch, sg.groupEpoch)
		}
		for mid, mem := range sg.members {
			if mem.epoch > sg.groupEpoch {
				t.Fatalf("step %d: member %s epoch %d past group epoch %d", step, mid, mem.epoch, sg.groupEpoch)
			}
			for topic, parts := range mem.assigned {
				init := sg.state.initializedBelow(topic, 1<<30)
				for _, p := range parts {
					if !containsInt32(init, p) {
						t.Fatalf("step %d: member %s assigned %v/%d, not initialized", step, mid, topic[15], p)
					}
				}
			}
		}
	}
}

func containsInt32(s []int32, v int32) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
