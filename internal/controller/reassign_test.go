package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// reassignImage holds unfenced brokers 1-4 and topic "t" with partition 0
// on replicas 1,2,3, all in sync, leader 1.
func reassignImage(t *testing.T) *metadata.Image {
	t.Helper()
	var recs []metadata.Record
	for id := int32(1); id <= 4; id++ {
		recs = append(recs, &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: int64(10 * id)})
	}
	recs = append(recs, &metadata.TopicRecord{Name: "t", TopicID: testID(1)},
		&metadata.PartitionRecord{TopicID: testID(1), Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1})
	return applyReassign(t, metadata.EmptyImage(), recs)
}

func applyReassign(t *testing.T, im *metadata.Image, recs []metadata.Record) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(im)
	for i, r := range recs {
		if err := d.Replay(im.Offset()+1+int64(i), 1, r); err != nil {
			t.Fatalf("replay %T: %v", r, err)
		}
	}
	return d.Apply()
}

// reassignRequest asks for partition p of "t" to move to replicas (nil: cancel).
func reassignRequest(version int16, topic string, p int32, replicas []int32) *kmsg.AlterPartitionAssignmentsRequest {
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.Version = version
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = p, replicas
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func reassignCode(resp *kmsg.AlterPartitionAssignmentsResponse) string {
	p := resp.Topics[0].Partitions[0]
	if p.ErrorCode == 0 {
		return "ok"
	}
	return errName(p.ErrorCode) + msgOf(p.ErrorMessage)
}

func partitionOf(t *testing.T, im *metadata.Image) metadata.PartitionState {
	t.Helper()
	st, ok := im.Partition(kafka.TopicPartition{Topic: "t", Partition: 0})
	if !ok {
		t.Fatal("partition t-0 missing")
	}
	return st
}

func wantState(t *testing.T, st metadata.PartitionState, replicas, isr, adding, removing []int32, leader, leaderEpoch int32) {
	t.Helper()
	if !slices.Equal(st.Replicas, replicas) || !slices.Equal(st.ISR, isr) || !slices.Equal(st.AddingReplicas, adding) ||
		!slices.Equal(st.RemovingReplicas, removing) || st.Leader != leader || st.LeaderEpoch != leaderEpoch {
		t.Fatalf("state %+v, want replicas=%v isr=%v adding=%v removing=%v leader=%d leader-epoch=%d",
			st, replicas, isr, adding, removing, leader, leaderEpoch)
	}
}

// TestReassignMoveCompletesOnISRExpansion moves {1,2,3} to {2,3,4}: the
// replica set grows to the union, the leader's expansion that adds 4
// completes the move in the same change, and 1, the leader, is replaced.
func TestReassignMoveCompletesOnISRExpansion(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := reassignImage(t)
	recs, resp := c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, []int32{2, 3, 4}))
	if got := reassignCode(resp); got != "ok" || len(recs) != 1 {
		t.Fatalf("start: %s with %d records", got, len(recs))
	}
	im = applyReassign(t, im, recs)
	st := partitionOf(t, im)
	wantState(t, st, []int32{2, 3, 4, 1}, []int32{1, 2, 3}, []int32{4}, []int32{1}, 1, 0)

	list := c.ListPartitionReassignments(im, kmsg.NewPtrListPartitionReassignmentsRequest())
	if len(list.Topics) != 1 || len(list.Topics[0].Partitions) != 1 ||
		!slices.Equal(list.Topics[0].Partitions[0].AddingReplicas, []int32{4}) ||
		!slices.Equal(list.Topics[0].Partitions[0].RemovingReplicas, []int32{1}) {
		t.Fatalf("list: %+v", list.Topics)
	}

	// An expansion that does not yet hold every adding replica is an
	// ordinary ISR change (none here: the ISR is the same).
	recs, _ = c.AlterPartition(im, alterRequest(3, 1, 10, 0, st.PartitionEpoch, 1, 2, 3))
	if len(recs) != 0 {
		t.Fatalf("unchanged ISR produced %d records", len(recs))
	}

	recs, aresp := c.AlterPartition(im, alterRequest(3, 1, 10, 0, st.PartitionEpoch, 1, 2, 3, 4))
	if len(recs) != 1 || aresp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("expansion: %d records, %+v", len(recs), aresp.Topics[0].Partitions[0])
	}
	ap := aresp.Topics[0].Partitions[0]
	im = applyReassign(t, im, recs)
	st = partitionOf(t, im)
	wantState(t, st, []int32{2, 3, 4}, []int32{2, 3, 4}, nil, nil, 2, 1)
	if ap.LeaderID != 2 || ap.LeaderEpoch != 1 || ap.PartitionEpoch != st.PartitionEpoch || !slices.Equal(ap.ISR, st.ISR) {
		t.Fatalf("AlterPartition answered %+v, image has %+v", ap, st)
	}
	if list := c.ListPartitionReassignments(im, kmsg.NewPtrListPartitionReassignmentsRequest()); len(list.Topics) != 0 {
		t.Fatalf("list after completion: %+v", list.Topics)
	}
	_, resp = c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, nil))
	if got := reassignCode(resp); got != "NO_REASSIGNMENT_IN_PROGRESS" {
		t.Fatalf("cancel without reassignment: %s", got)
	}
}

// TestReassignRemovalCompletesAtOnce lowers the replication factor: with
// nothing to catch up the reassignment completes in one change, and the
// leader, staying, gets a new epoch that fences the removed replica.
func TestReassignRemovalCompletesAtOnce(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := reassignImage(t)
	recs, resp := c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, []int32{1, 2}))
	if got := reassignCode(resp); got != "ok" {
		t.Fatal(got)
	}
	im = applyReassign(t, im, recs)
	wantState(t, partitionOf(t, im), []int32{1, 2}, []int32{1, 2}, nil, nil, 1, 1)

	// The same assignment again changes nothing.
	if recs, resp = c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, []int32{1, 2})); len(recs) != 0 || reassignCode(resp) != "ok" {
		t.Fatalf("no-op reassignment: %d records, %s", len(recs), reassignCode(resp))
	}
}

// TestReassignCancelReverts starts a move and cancels it: the adding
// replica leaves the replicas and the ISR, the original set comes back.
func TestReassignCancelReverts(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := reassignImage(t)
	recs, _ := c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, []int32{4, 2, 3}))
	im = applyReassign(t, im, recs)
	st := partitionOf(t, im)
	wantState(t, st, []int32{4, 2, 3, 1}, []int32{1, 2, 3}, []int32{4}, []int32{1}, 1, 0)

	recs, resp := c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, nil))
	if got := reassignCode(resp); got != "ok" || len(recs) != 1 {
		t.Fatalf("cancel: %s with %d records", got, len(recs))
	}
	im = applyReassign(t, im, recs)
	// As Kafka's revert, the replicas keep the union's order minus the adding.
	wantState(t, partitionOf(t, im), []int32{2, 3, 1}, []int32{1, 2, 3}, nil, nil, 1, 1)
}

// TestReassignCancelNeedsUncleanElection: when only adding replicas are in
// sync, reverting would elect outside the ISR, refused unless the topic
// allows unclean elections.
func TestReassignCancelNeedsUncleanElection(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := reassignImage(t)
	im = applyReassign(t, im, []metadata.Record{&metadata.PartitionChangeRecord{TopicID: testID(1), Partition: 0, Leader: 4,
		ISR: []int32{4}, Replicas: []int32{4, 1}, AddingReplicas: []int32{4}, RemovingReplicas: []int32{1}}})
	// A later reassignment starts from the union, so it is refused for a
	// replication factor change only when asked to be.
	_, resp := c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, nil))
	if got := reassignCode(resp); got != "INVALID_REPLICA_ASSIGNMENT: Unable to revert partition assignment for t:0 because it would require an unclean leader election." {
		t.Fatalf("strict cancel: %s", got)
	}
	v := "true"
	im = applyReassign(t, im, []metadata.Record{&metadata.ConfigRecord{ResourceType: metadata.ConfigResourceTopic, ResourceName: "t", Name: UncleanLeaderElectionKey, Value: &v}})
	recs, resp := c.AlterPartitionReassignments(im, reassignRequest(0, "t", 0, nil))
	if got := reassignCode(resp); got != "ok" {
		t.Fatalf("unclean cancel: %s", got)
	}
	im = applyReassign(t, im, recs)
	st := partitionOf(t, im)
	wantState(t, st, []int32{1}, []int32{1}, nil, nil, 1, st.LeaderEpoch)
}

// TestReassignErrors checks the per-partition errors Kafka answers.
func TestReassignErrors(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := reassignImage(t)
	for _, tc := range []struct {
		name     string
		req      *kmsg.AlterPartitionAssignmentsRequest
		want     string
		noRecord bool
	}{
		{"unknown topic", reassignRequest(0, "nope", 0, []int32{1}), "UNKNOWN_TOPIC_OR_PARTITION: Unable to find a topic named nope.", true},
		{"unknown partition", reassignRequest(0, "t", 7, []int32{1}), "UNKNOWN_TOPIC_OR_PARTITION: Unable to find partition t:7.", true},
		{"empty", reassignRequest(0, "t", 0, []int32{}), "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes an empty replica list.", true},
		{"duplicate", reassignRequest(0, "t", 0, []int32{2, 2}), "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes the broker 2 more than once.", true},
		{"unregistered", reassignRequest(0, "t", 0, []int32{2, 9}), "INVALID_REPLICA_ASSIGNMENT: The manual partition assignment includes broker 9, but no such broker is registered.", true},
		{"rf change refused", reassignRequest(1, "t", 0, []int32{2, 3}), "INVALID_REPLICATION_FACTOR: The replication factor is changed from 3 to 2 but allowReplicationFactorChange is false.", true},
	} {
		tc.req.AllowReplicationFactorChange = false
		recs, resp := c.AlterPartitionReassignments(im, tc.req)
		if got := reassignCode(resp); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if tc.noRecord && len(recs) != 0 {
			t.Errorf("%s: %d records", tc.name, len(recs))
		}
	}
	fenced := applyReassign(t, im, []metadata.Record{&metadata.FenceBrokerRecord{BrokerID: 4, BrokerEpoch: 40}})
	if _, resp := c.AlterPartitionReassignments(fenced, reassignRequest(0, "t", 0, []int32{4})); reassignCode(resp) !=
		"INVALID_REPLICA_ASSIGNMENT: All brokers specified in the manual partition assignment for partition 0 are fenced or in controlled shutdown." {
		t.Errorf("only fenced brokers: %s", reassignCode(resp))
	}
	// v1 with the change allowed, and v0 (no such field), may change it.
	req := reassignRequest(1, "t", 0, []int32{2, 3})
	req.AllowReplicationFactorChange = true
	if _, resp := c.AlterPartitionReassignments(im, req); reassignCode(resp) != "ok" || !resp.AllowReplicationFactorChange {
		t.Fatalf("allowed rf change: %s", reassignCode(resp))
	}
}

// TestCreatePartitionsReplicated: new partitions of a replicated topic get
// as many distinct replicas as partition 0 has, all in sync.
func TestCreatePartitionsReplicated(t *testing.T) {
	c := New(Options{Configs: testPolicy{}})
	im := reassignImage(t)
	req := kmsg.NewPtrCreatePartitionsRequest()
	rt := kmsg.NewCreatePartitionsRequestTopic()
	rt.Topic, rt.Count = "t", 4
	req.Topics = append(req.Topics, rt)
	recs, resp := c.CreatePartitions(im, req)
	if resp.Topics[0].ErrorCode != 0 || len(recs) != 3 {
		t.Fatalf("create partitions: %s, %d records", errName(resp.Topics[0].ErrorCode), len(recs))
	}
	im = applyReassign(t, im, recs)
	for p := int32(1); p < 4; p++ {
		st, _ := im.Partition(kafka.TopicPartition{Topic: "t", Partition: p})
		distinct := slices.Compact(slices.Sorted(slices.Values(st.Replicas)))
		if len(st.Replicas) != 3 || len(distinct) != 3 || !slices.Equal(st.ISR, st.Replicas) || st.Leader != st.Replicas[0] {
			t.Fatalf("partition %d: %+v", p, st)
		}
	}
}
