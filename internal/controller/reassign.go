package controller

// Partition reassignment (KIP-455), as Kafka's KRaft controller does it: a
// reassignment first grows the replica set to the union of the current and
// the target replicas (AddingReplicas join, RemovingReplicas will leave),
// the new replicas fetch from the leader and join the ISR through the
// leader's ordinary AlterPartition expansion, and the change that puts the
// last adding replica in the ISR also completes the reassignment: replicas
// become the target, the removed ones leave the ISR, and a removed leader
// is replaced. A reassignment that only removes replicas completes at once.

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// AlterPartitionReassignments computes the records and response of an
// AlterPartitionReassignments request (key 45). Per partition: null
// replicas cancel the reassignment in progress (NO_REASSIGNMENT_IN_PROGRESS
// when there is none), a list starts or replaces one after the checks of a
// manual assignment (INVALID_REPLICA_ASSIGNMENT); an unknown topic or
// partition is UNKNOWN_TOPIC_OR_PARTITION; from v1 a replication factor
// change without allow_replication_factor_change is INVALID_REPLICATION_FACTOR.
func (c *Controller) AlterPartitionReassignments(im *metadata.Image, req *kmsg.AlterPartitionAssignmentsRequest) ([]metadata.Record, *kmsg.AlterPartitionAssignmentsResponse) {
	resp := kmsg.NewPtrAlterPartitionAssignmentsResponse()
	resp.Version = req.Version
	allowRFChange := req.Version < 1 || req.AllowReplicationFactorChange
	resp.AllowReplicationFactorChange = allowRFChange
	var records []metadata.Record
	for _, rt := range req.Topics {
		out := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		out.Topic = rt.Topic
		topic, known := im.Topic(rt.Topic)
		for _, rp := range rt.Partitions {
			pr := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			pr.Partition = rp.Partition
			var st metadata.PartitionState
			ok := false
			if known {
				st, ok = topic.Partitions[rp.Partition]
			}
			var rec *metadata.PartitionChangeRecord
			var err *kerr.Error
			var msg string
			switch {
			case !known:
				err, msg = kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find a topic named %s.", rt.Topic)
			case !ok:
				err, msg = kerr.UnknownTopicOrPartition, fmt.Sprintf("Unable to find partition %s:%d.", rt.Topic, rp.Partition)
			case rp.Replicas == nil:
				rec, err, msg = cancelReassignment(im, topic, rp.Partition, st)
			default:
				rec, err, msg = startReassignment(im, topic.ID, rp.Partition, st, rp.Replicas, allowRFChange)
			}
			if err != nil {
				pr.ErrorCode = err.Code
				if msg != "" {
					// Kafka sends no message with the errors it raises bare
					// (NO_REASSIGNMENT_IN_PROGRESS).
					pr.ErrorMessage = &msg
				}
			} else if rec != nil {
				records = append(records, rec)
			}
			out.Partitions = append(out.Partitions, pr)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return records, resp
}

// startReassignment returns the change that moves a partition towards
// target: the grown replica set, or the completed reassignment when nothing
// needs to catch up. A target equal to the current replicas changes nothing.
func startReassignment(im *metadata.Image, id kafka.UUID, p int32, st metadata.PartitionState, target []int32, allowRFChange bool) (*metadata.PartitionChangeRecord, *kerr.Error, string) {
	if msg := invalidTarget(im, p, target); msg != "" {
		return nil, kerr.InvalidReplicaAssignment, msg
	}
	if current := len(st.Replicas) - len(st.AddingReplicas); !allowRFChange && len(target) != current {
		return nil, kerr.InvalidReplicationFactor, fmt.Sprintf(
			"The replication factor is changed from %d to %d but allowReplicationFactorChange is false.", current, len(target))
	}
	if !st.Reassigning() && slices.Equal(st.Replicas, target) {
		return nil, nil, ""
	}
	replicas, adding, removing := reassignmentReplicas(st.Replicas, target)
	grown := st
	grown.Replicas, grown.AddingReplicas, grown.RemovingReplicas = replicas, adding, removing
	if rec := completeReassignment(im, id, p, grown, st.ISR); rec != nil {
		return rec, nil, ""
	}
	return &metadata.PartitionChangeRecord{
		TopicID: id, Partition: p, Leader: metadata.NoLeaderChange,
		Replicas: replicas, AddingReplicas: adding, RemovingReplicas: removing,
	}, nil, ""
}

// invalidTarget checks a target replica list as Kafka's controller checks
// a manual assignment, with its messages (kafka-reassign-partitions prints
// them): not empty, every broker registered and listed once (in broker id
// order, so the smallest offender is named), and one of them unfenced.
// It returns "" for a valid list.
func invalidTarget(im *metadata.Image, p int32, target []int32) string {
	if len(target) == 0 {
		return "The manual partition assignment includes an empty replica list."
	}
	sorted := slices.Sorted(slices.Values(target))
	unfenced := false
	for i, id := range sorted {
		b, ok := im.Broker(id)
		if !ok {
			return fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if i > 0 && sorted[i-1] == id {
			return fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)
		}
		unfenced = unfenced || !b.Fenced
	}
	if !unfenced {
		return fmt.Sprintf("All brokers specified in the manual partition assignment for partition %d are fenced or in controlled shutdown.", p)
	}
	return ""
}

// reassignmentReplicas is Kafka's PartitionReassignmentReplicas: the
// target replicas first (so the preferred leader is the target's), then
// the current ones that leave; adding and removing are never nil, so a
// change record carrying them replaces what the partition had.
func reassignmentReplicas(current, target []int32) (replicas, adding, removing []int32) {
	replicas = slices.Clone(target)
	adding, removing = []int32{}, []int32{}
	for _, id := range current {
		if !slices.Contains(target, id) {
			removing = append(removing, id)
			replicas = append(replicas, id)
		}
	}
	for _, id := range target {
		if !slices.Contains(current, id) {
			adding = append(adding, id)
		}
	}
	return replicas, adding, removing
}

// completeReassignment returns the change that ends st's reassignment when
// the partition is to have isr, or nil while it cannot end: an adding
// replica is not in sync yet, or no replica or in-sync replica would be
// left. The leader is re-elected among the remaining in-sync replicas when
// it is being removed; otherwise its epoch is bumped whenever replicas
// leave, as Kafka does, so a removed replica's stale fetches are fenced.
func completeReassignment(im *metadata.Image, id kafka.UUID, p int32, st metadata.PartitionState, isr []int32) *metadata.PartitionChangeRecord {
	for _, a := range st.AddingReplicas {
		if !slices.Contains(isr, a) {
			return nil
		}
	}
	replicas := without(st.Replicas, st.RemovingReplicas)
	newISR := without(isr, st.RemovingReplicas)
	if len(replicas) == 0 || len(newISR) == 0 {
		return nil
	}
	leader := metadata.NoLeaderChange
	switch {
	case st.Leader == metadata.NoLeader || slices.Contains(st.RemovingReplicas, st.Leader):
		leader, _ = ElectLeader(metadata.PartitionState{Replicas: replicas, ISR: newISR}, usableBroker(im), false)
	case len(st.RemovingReplicas) > 0:
		leader = st.Leader
	}
	return &metadata.PartitionChangeRecord{
		TopicID: id, Partition: p, Leader: leader, ISR: newISR, Replicas: replicas,
		AddingReplicas: []int32{}, RemovingReplicas: []int32{},
	}
}

// cancelReassignment returns the change that reverts a reassignment in
// progress: the adding replicas leave the replica set and the ISR. When
// only adding replicas are in sync, the revert needs an unclean election:
// allowed when the topic enables it (a live original replica becomes the
// whole ISR), refused otherwise, as Kafka's PartitionReassignmentRevert.
func cancelReassignment(im *metadata.Image, topic *metadata.Topic, p int32, st metadata.PartitionState) (*metadata.PartitionChangeRecord, *kerr.Error, string) {
	if !st.Reassigning() {
		return nil, kerr.NoReassignmentInProgress, ""
	}
	usable := usableBroker(im)
	original := without(st.Replicas, st.AddingReplicas)
	isr := without(st.ISR, st.AddingReplicas)
	if len(isr) == 0 {
		leader, uncleanISR := ElectLeader(metadata.PartitionState{Replicas: original}, usable, UncleanLeaderElectionEnabled(im, topic.Name))
		if leader == metadata.NoLeader {
			return nil, kerr.InvalidReplicaAssignment, fmt.Sprintf(
				"Unable to revert partition assignment for %s:%d because it would require an unclean leader election.", topic.Name, p)
		}
		isr = uncleanISR
	}
	leader := metadata.NoLeaderChange
	switch {
	case !slices.Contains(isr, st.Leader):
		leader, _ = ElectLeader(metadata.PartitionState{Replicas: original, ISR: isr}, usable, false)
	case len(st.AddingReplicas) > 0:
		leader = st.Leader
	}
	return &metadata.PartitionChangeRecord{
		TopicID: topic.ID, Partition: p, Leader: leader, ISR: isr, Replicas: original,
		AddingReplicas: []int32{}, RemovingReplicas: []int32{},
	}, nil, ""
}

// ListPartitionReassignments answers a ListPartitionReassignments request
// (key 46): the partitions with a reassignment in progress, of every topic
// when the request names none; named topics or partitions that are unknown
// or not being reassigned are left out, as Kafka does.
func (c *Controller) ListPartitionReassignments(im *metadata.Image, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := kmsg.NewPtrListPartitionReassignmentsResponse()
	resp.Version = req.Version
	add := func(t *metadata.Topic, parts []int32) {
		out := kmsg.NewListPartitionReassignmentsResponseTopic()
		out.Topic = t.Name
		for _, p := range parts {
			st, ok := t.Partitions[p]
			if !ok || !st.Reassigning() {
				continue
			}
			rp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			rp.Partition = p
			rp.Replicas = slices.Clone(st.Replicas)
			rp.AddingReplicas = append([]int32{}, st.AddingReplicas...)
			rp.RemovingReplicas = append([]int32{}, st.RemovingReplicas...)
			out.Partitions = append(out.Partitions, rp)
		}
		if len(out.Partitions) > 0 {
			resp.Topics = append(resp.Topics, out)
		}
	}
	if req.Topics == nil {
		for _, name := range im.TopicNames() {
			t, _ := im.Topic(name)
			add(t, t.PartitionIDs())
		}
		return resp
	}
	for _, rt := range req.Topics {
		if t, ok := im.Topic(rt.Topic); ok {
			add(t, rt.Partitions)
		}
	}
	return resp
}

// usableBroker reports whether a broker may lead or join the ISR:
// registered and unfenced.
func usableBroker(im *metadata.Image) func(int32) bool {
	return func(id int32) bool {
		b, ok := im.Broker(id)
		return ok && !b.Fenced
	}
}

// without returns ids minus the members of drop, in order, never nil.
func without(ids, drop []int32) []int32 {
	out := []int32{}
	for _, id := range ids {
		if !slices.Contains(drop, id) {
			out = append(out, id)
		}
	}
	return out
}

// changedState is the partition state a change record leaves, as replay
// computes it, for responses sent before the record is replayed.
func changedState(st metadata.PartitionState, rec *metadata.PartitionChangeRecord) metadata.PartitionState {
	if rec.Replicas != nil {
		st.Replicas = slices.Clone(rec.Replicas)
	}
	if rec.ISR != nil {
		st.ISR = slices.Clone(rec.ISR)
	}
	if rec.AddingReplicas != nil {
		st.AddingReplicas = slices.Clone(rec.AddingReplicas)
	}
	if rec.RemovingReplicas != nil {
		st.RemovingReplicas = slices.Clone(rec.RemovingReplicas)
	}
	if rec.Leader != metadata.NoLeaderChange {
		st.Leader = rec.Leader
		st.LeaderEpoch++
	}
	st.PartitionEpoch++
	return st
}
