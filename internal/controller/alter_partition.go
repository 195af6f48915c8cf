package controller

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// AlterPartition computes the records and response of an AlterPartition
// request: a partition leader asking to shrink or expand its ISR. Each
// partition is checked as Kafka's controller does, so a leader acting on a
// stale view is refused rather than undoing a newer change:
//   - the requesting broker must be registered at the request's broker epoch
//     (STALE_BROKER_EPOCH for the whole request);
//   - a leader epoch below the partition's is FENCED_LEADER_EPOCH, above it
//     NOT_CONTROLLER (this controller has not replayed that far);
//   - the requester must be the leader (INVALID_REQUEST);
//   - the partition epoch must match (INVALID_UPDATE_VERSION): a request
//     built before another change to the partition is stale;
//   - the new ISR must hold the leader and only assigned replicas
//     (INVALID_REQUEST), and every member added must be an unfenced broker,
//     at the broker epoch given from v3 (INELIGIBLE_REPLICA, or
//     OPERATION_NOT_ATTEMPTED before v2, as Kafka).
//
// A valid request whose ISR equals the current one produces no record and
// answers the current state.
func (c *Controller) AlterPartition(im *metadata.Image, req *kmsg.AlterPartitionRequest) ([]metadata.Record, *kmsg.AlterPartitionResponse) {
	resp := kmsg.NewPtrAlterPartitionResponse()
	resp.Version = req.Version
	if b, ok := im.Broker(req.BrokerID); !ok || (req.Version >= 1 && req.BrokerEpoch != -1 && b.Epoch != req.BrokerEpoch) {
		resp.ErrorCode = kerr.StaleBrokerEpoch.Code
		return nil, resp
	}
	var records []metadata.Record
	for _, rt := range req.Topics {
		out := kmsg.NewAlterPartitionResponseTopic()
		out.Topic, out.TopidID = rt.Topic, rt.TopicID // kmsg spells the field TopidID
		var t *metadata.Topic
		var known bool
		if req.Version >= 2 {
			t, known = im.TopicByID(kafka.UUID(rt.TopicID))
		} else {
			t, known = im.Topic(rt.Topic)
		}
		for _, rp := range rt.Partitions {
			pr := kmsg.NewAlterPartitionResponseTopicPartition()
			pr.Partition = rp.Partition
			if !known {
				pr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				if req.Version >= 2 {
					pr.ErrorCode = kerr.UnknownTopicID.Code
				}
				out.Partitions = append(out.Partitions, pr)
				continue
			}
			rec, st, code := alterOnePartition(im, req, t, rp)
			pr.ErrorCode = code
			if code == 0 {
				pr.LeaderID, pr.LeaderEpoch, pr.ISR, pr.PartitionEpoch = st.Leader, st.LeaderEpoch, st.ISR, st.PartitionEpoch
				if rec != nil {
					records = append(records, rec)
				}
			}
			out.Partitions = append(out.Partitions, pr)
		}
		resp.Topics = append(resp.Topics, out)
	}
	return records, resp
}

// alterOnePartition validates one partition's change and returns its record
// (nil when nothing changes) with the state the partition will have.
func alterOnePartition(im *metadata.Image, req *kmsg.AlterPartitionRequest, t *metadata.Topic, rp kmsg.AlterPartitionRequestTopicPartition) (*metadata.PartitionChangeRecord, metadata.PartitionState, int16) {
	st, ok := t.Partitions[rp.Partition]
	switch {
	case !ok:
		return nil, st, kerr.UnknownTopicOrPartition.Code
	case rp.LeaderEpoch < st.LeaderEpoch:
		return nil, st, kerr.FencedLeaderEpoch.Code
	case rp.LeaderEpoch > st.LeaderEpoch:
		return nil, st, kerr.NotController.Code
	case req.BrokerID != st.Leader:
		return nil, st, kerr.InvalidRequest.Code
	case rp.PartitionEpoch != st.PartitionEpoch:
		return nil, st, kerr.InvalidUpdateVersion.Code
	case rp.LeaderRecoveryState != 0:
		// Sluice never elects uncleanly into a recovering state.
		return nil, st, kerr.InvalidRequest.Code
	}
	newISR, epochs := requestedISR(req.Version, rp)
	if !slices.Contains(newISR, st.Leader) {
		return nil, st, kerr.InvalidRequest.Code
	}
	for i, id := range newISR {
		if !slices.Contains(st.Replicas, id) || slices.Contains(newISR[:i], id) {
			return nil, st, kerr.InvalidRequest.Code
		}
		if slices.Contains(st.ISR, id) {
			continue
		}
		b, ok := im.Broker(id)
		if !ok || b.Fenced || (epochs != nil && epochs[i] != -1 && epochs[i] != b.Epoch) {
			if req.Version >= 2 {
				return nil, st, kerr.IneligibleReplica.Code
			}
			return nil, st, kerr.OperationNotAttempted.Code
		}
	}
	if st.Reassigning() {
		// The expansion that brings the last adding replica in sync
		// completes the reassignment in the same change, as Kafka does.
		if rec := completeReassignment(im, t.ID, rp.Partition, st, newISR); rec != nil {
			return rec, changedState(st, rec), 0
		}
	}
	if sameMembers(newISR, st.ISR) {
		return nil, st, 0
	}
	st.ISR = slices.Clone(newISR)
	st.PartitionEpoch++
	rec := &metadata.PartitionChangeRecord{TopicID: t.ID, Partition: rp.Partition, Leader: metadata.NoLeaderChange, ISR: slices.Clone(newISR)}
	return rec, st, 0
}

// requestedISR returns the new ISR and, from v3, each member's broker epoch.
func requestedISR(version int16, rp kmsg.AlterPartitionRequestTopicPartition) ([]int32, []int64) {
	if version < 3 {
		return rp.NewISR, nil
	}
	ids := make([]int32, len(rp.NewEpochISR))
	epochs := make([]int64, len(rp.NewEpochISR))
	for i, m := range rp.NewEpochISR {
		ids[i], epochs[i] = m.BrokerID, m.BrokerEpoch
	}
	return ids, epochs
}

func sameMembers(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// ElectLeader picks a partition's leader after its leader was lost or
// fenced: the first replica, in assignment order, that is in the ISR and
// usable (registered, unfenced). Only when none is and unclean is set
// (unclean.leader.election.enable) may a usable replica outside the ISR
// lead, which can lose acknowledged records, as in Kafka. It returns
// metadata.NoLeader when no replica qualifies; the partition then stays
// leaderless, with its ISR kept, until an ISR member comes back.
// The returned ISR is what the change record should carry: unchanged for a
// clean election, just the new leader for an unclean one.
func ElectLeader(st metadata.PartitionState, usable func(id int32) bool, unclean bool) (leader int32, isr []int32) {
	for _, id := range st.Replicas {
		if slices.Contains(st.ISR, id) && usable(id) {
			return id, st.ISR
		}
	}
	if unclean {
		for _, id := range st.Replicas {
			if usable(id) {
				return id, []int32{id}
			}
		}
	}
	return metadata.NoLeader, st.ISR
}

// UncleanLeaderElectionKey is the topic config that allows electing a
// replica outside the ISR when no in-sync one is usable.
const UncleanLeaderElectionKey = "unclean.leader.election.enable"

// UncleanLeaderElectionEnabled reports unclean.leader.election.enable for a
// topic: its own config, else the cluster-wide dynamic broker default,
// else Kafka's default, false. The election code passes it to ElectLeader.
func UncleanLeaderElectionEnabled(im *metadata.Image, topic string) bool {
	for _, res := range []metadata.ConfigResource{
		{Type: metadata.ConfigResourceTopic, Name: topic},
		{Type: metadata.ConfigResourceBroker, Name: ""},
	} {
		if v, ok := im.Config(res, UncleanLeaderElectionKey); ok {
			return strings.EqualFold(strings.TrimSpace(v), "true")
		}
	}
	return false
}
