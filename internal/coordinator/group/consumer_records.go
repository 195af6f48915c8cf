package group

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
	cr "github.com/sluice-io/sluice/internal/coordinator/group/consumerrec"
)

// The records of consumer groups, in Kafka's key and value formats
// (package consumerrec): each op encodes itself, and replay decodes a
// record back into the op that made it.

func encodeRecord(k cr.Key, v cr.Value) Record {
	if v == nil {
		return Record{Key: k.AppendTo(nil)}
	}
	key, value := cr.Encode(k, v)
	return Record{Key: key, Value: value}
}

func (o opEpoch) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupMetadataKey{GroupID: id}, &cr.ConsumerGroupMetadataValue{Epoch: o.epoch, MetadataHash: o.hash})
}

func (opGroupTombstone) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupMetadataKey{GroupID: id}, nil)
}

// opPartitionMetaTombstone clears the subscription metadata record Kafka
// versions before 4.1 wrote (type 4); deleting a group writes it, as Kafka.
type opPartitionMetaTombstone struct{}

func (opPartitionMetaTombstone) apply(*Group, time.Time) {}

func (opPartitionMetaTombstone) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupPartitionMetadataKey{GroupID: id}, nil)
}

func (o opMember) record(id string) Record {
	m := o.m
	v := &cr.ConsumerGroupMemberMetadataValue{
		InstanceID: m.instanceID, RackID: m.rackID, ClientID: m.clientID, ClientHost: m.clientHost,
		SubscribedTopicNames: m.subscribedNames, RebalanceTimeoutMs: m.rebalanceTimeoutMs, ServerAssignor: m.serverAssignor,
	}
	if v.SubscribedTopicNames == nil {
		v.SubscribedTopicNames = []string{}
	}
	if m.regex != "" {
		v.SubscribedTopicRegex = &m.regex
	}
	if m.classic != nil {
		cm := &cr.ClassicMemberMetadata{SessionTimeoutMs: m.classic.sessionTimeoutMs}
		for _, p := range m.classic.protocols {
			cm.SupportedProtocols = append(cm.SupportedProtocols, cr.ClassicProtocol{Name: p.Name, Metadata: p.Metadata})
		}
		v.ClassicMemberMetadata = cm
	}
	return encodeRecord(&cr.ConsumerGroupMemberMetadataKey{GroupID: id, MemberID: m.id}, v)
}

func (o opMemberTombstone) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupMemberMetadataKey{GroupID: id, MemberID: o.id}, nil)
}

func (o opTarget) record(id string) Record {
	v := &cr.ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: []cr.TopicPartition{}}
	for _, tid := range slices.SortedFunc(maps.Keys(o.assignment), compareUUID) {
		v.TopicPartitions = append(v.TopicPartitions, cr.TopicPartition{TopicID: tid, Partitions: o.assignment[tid]})
	}
	return encodeRecord(&cr.ConsumerGroupTargetAssignmentMemberKey{GroupID: id, MemberID: o.memberID}, v)
}

func (o opTargetTombstone) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupTargetAssignmentMemberKey{GroupID: id, MemberID: o.id}, nil)
}

func (o opTargetMeta) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupTargetAssignmentMetadataKey{GroupID: id},
		&cr.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: o.epoch, AssignmentTimestamp: o.timestamp})
}

// opTargetMetaTombstone deletes the target's metadata with the group.
type opTargetMetaTombstone struct{}

func (opTargetMetaTombstone) apply(g *Group, _ time.Time) {
	if g.cg != nil {
		g.cg.assignmentEpoch, g.cg.assignmentTimestamp = 0, 0
	}
}

func (opTargetMetaTombstone) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupTargetAssignmentMetadataKey{GroupID: id}, nil)
}

func (o opCurrent) record(id string) Record {
	m := o.m
	v := &cr.ConsumerGroupCurrentMemberAssignmentValue{
		MemberEpoch: m.epoch, PreviousMemberEpoch: m.prevEpoch, State: int8(m.state),
		AssignedPartitions: toRecordPartitions(m.assigned), PartitionsPendingRevocation: toRecordPartitions(m.pendingRevocation),
	}
	return encodeRecord(&cr.ConsumerGroupCurrentMemberAssignmentKey{GroupID: id, MemberID: m.id}, v)
}

func toRecordPartitions(p partitionEpochs) []cr.TopicPartitions {
	out := []cr.TopicPartitions{}
	for _, tid := range slices.SortedFunc(maps.Keys(p), compareUUID) {
		parts := slices.Sorted(maps.Keys(p[tid]))
		epochs := make([]int32, len(parts))
		for i, part := range parts {
			epochs[i] = p[tid][part]
		}
		out = append(out, cr.TopicPartitions{TopicID: tid, Partitions: parts, AssignmentEpochs: epochs})
	}
	return out
}

// fromRecordPartitions reads a current assignment; partitions written
// without their epochs (Kafka before 4.3) take epoch, the member's.
func fromRecordPartitions(tps []cr.TopicPartitions, epoch int32) partitionEpochs {
	out := partitionEpochs{}
	for _, tp := range tps {
		for i, part := range tp.Partitions {
			e := epoch
			if i < len(tp.AssignmentEpochs) {
				e = tp.AssignmentEpochs[i]
			}
			putEpoch(out, tp.TopicID, part, e)
		}
	}
	return out
}

func (o opCurrentTombstone) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupCurrentMemberAssignmentKey{GroupID: id, MemberID: o.id}, nil)
}

func (o opRegex) record(id string) Record {
	v := &cr.ConsumerGroupRegularExpressionValue{Topics: o.resolved.topics, Version: o.resolved.version, Timestamp: o.resolved.timestamp}
	if v.Topics == nil {
		v.Topics = []string{}
	}
	return encodeRecord(&cr.ConsumerGroupRegularExpressionKey{GroupID: id, RegularExpression: o.regex}, v)
}

func (o opRegexTombstone) record(id string) Record {
	return encodeRecord(&cr.ConsumerGroupRegularExpressionKey{GroupID: id, RegularExpression: o.regex}, nil)
}

// replayConsumer applies a consumer-group record read back from the log.
func (m *Manager) replayConsumer(now time.Time, key, value []byte) error {
	k, v, err := cr.Decode(key, value)
	if err != nil {
		return fmt.Errorf("consumer group record: %w", err)
	}
	op, groupID, err := opFromRecord(k, v)
	if err != nil {
		return err
	}
	g, ok := m.groups[groupID]
	if !ok {
		if value == nil {
			return nil
		}
		g = newGroup(m, groupID, now)
		m.groups[groupID] = g
	}
	if g.cg == nil {
		if value == nil {
			// A tombstone of a consumer group not (or no longer) known.
			m.dropIfForgotten(g)
			return nil
		}
		// Any record of a consumer group makes it one, as Kafka's replay
		// does (its first record is a member's, not the epoch).
		g.resetMembership()
		g.cg = newConsumerGroup()
	}
	op.apply(g, now)
	if _, gone := op.(opGroupTombstone); gone {
		m.dropIfForgotten(g)
	}
	return nil
}

// opFromRecord turns a decoded record into its op and group id.
func opFromRecord(k cr.Key, v cr.Value) (cgOp, string, error) {
	switch k := k.(type) {
	case *cr.ConsumerGroupMetadataKey:
		if v == nil {
			return opGroupTombstone{}, k.GroupID, nil
		}
		val := v.(*cr.ConsumerGroupMetadataValue)
		return opEpoch{epoch: val.Epoch, hash: val.MetadataHash}, k.GroupID, nil
	case *cr.ConsumerGroupPartitionMetadataKey:
		return opPartitionMetaTombstone{}, k.GroupID, nil
	case *cr.ConsumerGroupMemberMetadataKey:
		if v == nil {
			return opMemberTombstone{k.MemberID}, k.GroupID, nil
		}
		return opMember{memberFromRecord(k.MemberID, v.(*cr.ConsumerGroupMemberMetadataValue))}, k.GroupID, nil
	case *cr.ConsumerGroupTargetAssignmentMetadataKey:
		if v == nil {
			return opTargetMetaTombstone{}, k.GroupID, nil
		}
		val := v.(*cr.ConsumerGroupTargetAssignmentMetadataValue)
		return opTargetMeta{epoch: val.AssignmentEpoch, timestamp: val.AssignmentTimestamp}, k.GroupID, nil
	case *cr.ConsumerGroupTargetAssignmentMemberKey:
		if v == nil {
			return opTargetTombstone{k.MemberID}, k.GroupID, nil
		}
		a := assignor.Assignment{}
		for _, tp := range v.(*cr.ConsumerGroupTargetAssignmentMemberValue).TopicPartitions {
			a[tp.TopicID] = slices.Sorted(slices.Values(tp.Partitions))
		}
		return opTarget{memberID: k.MemberID, assignment: a}, k.GroupID, nil
	case *cr.ConsumerGroupCurrentMemberAssignmentKey:
		if v == nil {
			return opCurrentTombstone{k.MemberID}, k.GroupID, nil
		}
		val := v.(*cr.ConsumerGroupCurrentMemberAssignmentValue)
		mem := newConsumerMember(k.MemberID)
		mem.epoch, mem.prevEpoch, mem.state = val.MemberEpoch, val.PreviousMemberEpoch, memberState(val.State)
		mem.assigned = fromRecordPartitions(val.AssignedPartitions, val.MemberEpoch)
		mem.pendingRevocation = fromRecordPartitions(val.PartitionsPendingRevocation, val.MemberEpoch)
		return opCurrent{mem}, k.GroupID, nil
	case *cr.ConsumerGroupRegularExpressionKey:
		if v == nil {
			return opRegexTombstone{k.RegularExpression}, k.GroupID, nil
		}
		val := v.(*cr.ConsumerGroupRegularExpressionValue)
		return opRegex{regex: k.RegularExpression, resolved: resolvedRegex{topics: slices.Sorted(slices.Values(val.Topics)), version: val.Version, timestamp: val.Timestamp}}, k.GroupID, nil
	}
	return nil, "", fmt.Errorf("consumer group record of type %d", k.RecordType())
}

func memberFromRecord(id string, v *cr.ConsumerGroupMemberMetadataValue) *consumerMember {
	m := newConsumerMember(id)
	m.instanceID, m.rackID, m.clientID, m.clientHost = v.InstanceID, v.RackID, v.ClientID, v.ClientHost
	m.subscribedNames = slices.Compact(slices.Sorted(slices.Values(v.SubscribedTopicNames)))
	if v.SubscribedTopicRegex != nil {
		m.regex = *v.SubscribedTopicRegex
	}
	m.rebalanceTimeoutMs, m.serverAssignor = v.RebalanceTimeoutMs, v.ServerAssignor
	if c := v.ClassicMemberMetadata; c != nil {
		m.classic = &classicMemberMetadata{sessionTimeoutMs: c.SessionTimeoutMs}
		for _, p := range c.SupportedProtocols {
			m.classic.protocols = append(m.classic.protocols, Protocol{Name: p.Name, Metadata: p.Metadata})
		}
	}
	return m
}
