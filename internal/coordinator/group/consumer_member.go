package group

import (
	"bytes"
	"maps"
	"slices"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// memberState is a consumer-group member's reconciliation state, with
// Kafka's MemberState values (they are persisted).
type memberState int8

const (
	// memberStable: the member owns its whole current assignment.
	memberStable memberState = 0
	// memberUnrevokedPartitions: the member must first give up partitions.
	memberUnrevokedPartitions memberState = 1
	// memberUnreleasedPartitions: partitions of its target are still owned
	// by other members; it waits for them.
	memberUnreleasedPartitions memberState = 2
	// memberUnknown: a state the coordinator does not know (a newer one).
	memberUnknown memberState = 127
)

// Member epochs with a meaning of their own (Kafka's).
const (
	leaveGroupMemberEpoch       int32 = -1
	leaveGroupStaticMemberEpoch int32 = -2
)

// partitionEpochs maps topic id to partition to the epoch the partition
// was assigned at (KIP-1251: a commit from an older epoch is fenced only
// for partitions assigned after it).
type partitionEpochs map[kafka.UUID]map[int32]int32

func (p partitionEpochs) clone() partitionEpochs {
	out := make(partitionEpochs, len(p))
	for id, parts := range p {
		out[id] = maps.Clone(parts)
	}
	return out
}

func (p partitionEpochs) has(id kafka.UUID, partition int32) bool {
	_, ok := p[id][partition]
	return ok
}

// sameKeys reports whether p and q hold the same partitions (epochs aside).
func (p partitionEpochs) sameKeys(q partitionEpochs) bool {
	if len(p) != len(q) {
		return false
	}
	for id, parts := range p {
		other, ok := q[id]
		if !ok || len(other) != len(parts) {
			return false
		}
		for part := range parts {
			if _, ok := other[part]; !ok {
				return false
			}
		}
	}
	return true
}

// topicPartitions lists p sorted by topic id then partition.
func (p partitionEpochs) topicPartitions() []TopicPartitions {
	out := make([]TopicPartitions, 0, len(p))
	for _, id := range slices.SortedFunc(maps.Keys(p), compareUUID) {
		out = append(out, TopicPartitions{TopicID: id, Partitions: slices.Sorted(maps.Keys(p[id]))})
	}
	return out
}

func compareUUID(a, b kafka.UUID) int { return bytes.Compare(a[:], b[:]) }

// classicMemberMetadata is what a member that speaks the classic protocol
// inside a consumer group keeps (an online migration).
type classicMemberMetadata struct {
	sessionTimeoutMs int32
	protocols        []Protocol
}

// consumerMember is one member of a consumer group (KIP-848).
type consumerMember struct {
	id         string
	instanceID *string
	rackID     *string
	// epoch is the member epoch; prevEpoch the one before its last bump
	// (a member whose answer was lost retries with it).
	epoch, prevEpoch int32
	state            memberState
	clientID         string
	clientHost       string
	// subscribedNames is sorted; regex is "" when none.
	subscribedNames    []string
	regex              string
	rebalanceTimeoutMs int32
	serverAssignor     *string
	assigned           partitionEpochs
	pendingRevocation  partitionEpochs
	classic            *classicMemberMetadata

	// sessionDeadline fences the member when it stops heartbeating;
	// rebalanceDeadline (with the epoch it was set at) when it does not
	// revoke in time. Not persisted: set afresh on load.
	sessionDeadline   time.Time
	rebalanceDeadline time.Time
	rebalanceEpoch    int32
}

func newConsumerMember(id string) *consumerMember {
	return &consumerMember{id: id, rebalanceTimeoutMs: -1, assigned: partitionEpochs{}, pendingRevocation: partitionEpochs{}}
}

// clone copies the member; the builder-style updates of the heartbeat work
// on a copy so that "did it change" compares two values, as Kafka does.
func (m *consumerMember) clone() *consumerMember {
	c := *m
	c.subscribedNames = slices.Clone(m.subscribedNames)
	c.assigned = m.assigned.clone()
	c.pendingRevocation = m.pendingRevocation.clone()
	return &c
}

// isReconciledTo reports whether the member has converged to epoch.
func (m *consumerMember) isReconciledTo(epoch int32) bool {
	return m.state == memberStable && m.epoch == epoch
}

// updateEpoch bumps the member epoch, remembering the previous one.
func (m *consumerMember) updateEpoch(epoch int32) {
	m.prevEpoch = m.epoch
	m.epoch = epoch
}

// sameSubscription reports whether the persisted member metadata is equal.
func (m *consumerMember) sameMetadata(o *consumerMember) bool {
	return m.id == o.id && eqStrPtr(m.instanceID, o.instanceID) && eqStrPtr(m.rackID, o.rackID) &&
		m.clientID == o.clientID && m.clientHost == o.clientHost &&
		slices.Equal(m.subscribedNames, o.subscribedNames) && m.regex == o.regex &&
		m.rebalanceTimeoutMs == o.rebalanceTimeoutMs && eqStrPtr(m.serverAssignor, o.serverAssignor) &&
		(m.classic == nil) == (o.classic == nil)
}

// sameAssignmentState reports whether the persisted current assignment is
// equal.
func (m *consumerMember) sameAssignmentState(o *consumerMember) bool {
	return m.epoch == o.epoch && m.prevEpoch == o.prevEpoch && m.state == o.state &&
		equalPartitionEpochs(m.assigned, o.assigned) && equalPartitionEpochs(m.pendingRevocation, o.pendingRevocation)
}

func equalPartitionEpochs(a, b partitionEpochs) bool {
	return maps.EqualFunc(a, b, func(x, y map[int32]int32) bool { return maps.Equal(x, y) })
}

func eqStrPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// usesClassic reports whether the member speaks the classic protocol.
func (m *consumerMember) usesClassic() bool { return m.classic != nil }
