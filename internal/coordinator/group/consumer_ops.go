package group

import (
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
)

// A cgOp is one consumer-group record as a change: it applies itself to the
// group and encodes itself as the record Kafka writes. Live operations and
// the replay of the log go through the same apply, so the state a heartbeat
// builds is the state a reload rebuilds.
type cgOp interface {
	apply(g *Group, now time.Time)
	record(groupID string) Record
}

// cgDo applies op to the group at once and queues its record for the
// operation's write (cgFlush).
func (m *Manager) cgDo(g *Group, op cgOp) {
	if _, ok := op.(opEpoch); ok {
		m.counters.ConsumerRebalances++
	}
	op.apply(g, m.cgNow)
	m.cgPending = append(m.cgPending, op.record(g.id))
}

// cgFlush writes the records queued by the operation as one write; done
// (may be nil) runs once they are durable, or at once when there are none.
func (m *Manager) cgFlush(done func(error)) {
	recs := m.cgPending
	m.cgPending = nil
	if len(recs) == 0 {
		if done != nil {
			done(nil)
		}
		return
	}
	m.emit(recs, done)
}

// opEpoch is ConsumerGroupMetadata: the group epoch (creating the group).
type opEpoch struct {
	epoch int32
	hash  int64
}

func (o opEpoch) apply(g *Group, _ time.Time) {
	if g.cg == nil {
		g.cg = newConsumerGroup()
	}
	g.cg.groupEpoch = o.epoch
	g.cg.metadataHash = o.hash
}

// opGroupTombstone removes the consumer group (its offsets stay).
type opGroupTombstone struct{}

func (opGroupTombstone) apply(g *Group, _ time.Time) { g.cg = nil }

// opMember is ConsumerGroupMemberMetadata: a member's subscription and
// identity; its assignment and timers are kept.
type opMember struct{ m *consumerMember }

func (o opMember) apply(g *Group, now time.Time) {
	cg := g.cg
	cur, ok := cg.members[o.m.id]
	if !ok {
		cur = newConsumerMember(o.m.id)
		session, _ := g.mgr.cfg.consumerTimeouts(g.id)
		cur.sessionDeadline = now.Add(session)
		if o.m.classic != nil {
			cur.sessionDeadline = now.Add(time.Duration(o.m.classic.sessionTimeoutMs) * time.Millisecond)
		}
	} else {
		// Members are values: a change makes a new one, so that what a
		// heartbeat read before it stays as it was.
		cur = cur.clone()
	}
	if cur.instanceID != nil && (o.m.instanceID == nil || *cur.instanceID != *o.m.instanceID) && cg.static[*cur.instanceID] == cur.id {
		delete(cg.static, *cur.instanceID)
	}
	cur.instanceID, cur.rackID = o.m.instanceID, o.m.rackID
	cur.clientID, cur.clientHost = o.m.clientID, o.m.clientHost
	cur.subscribedNames, cur.regex = o.m.subscribedNames, o.m.regex
	cur.rebalanceTimeoutMs, cur.serverAssignor = o.m.rebalanceTimeoutMs, o.m.serverAssignor
	cur.classic = o.m.classic
	cg.putMember(cur)
}

// opMemberTombstone removes a member (its current assignment is already
// gone: Kafka writes that tombstone first).
type opMemberTombstone struct{ id string }

func (o opMemberTombstone) apply(g *Group, _ time.Time) { g.cg.removeMember(o.id) }

// opTarget is ConsumerGroupTargetAssignmentMember.
type opTarget struct {
	memberID   string
	assignment assignor.Assignment
}

func (o opTarget) apply(g *Group, _ time.Time) {
	if len(o.assignment) == 0 {
		g.cg.target[o.memberID] = assignor.Assignment{}
		return
	}
	g.cg.target[o.memberID] = o.assignment
}

type opTargetTombstone struct{ id string }

func (o opTargetTombstone) apply(g *Group, _ time.Time) { delete(g.cg.target, o.id) }

// opTargetMeta is ConsumerGroupTargetAssignmentMetadata.
type opTargetMeta struct {
	epoch     int32
	timestamp int64
}

func (o opTargetMeta) apply(g *Group, _ time.Time) {
	g.cg.assignmentEpoch = o.epoch
	g.cg.assignmentTimestamp = o.timestamp
}

// opCurrent is ConsumerGroupCurrentMemberAssignment: a member's epochs,
// state and current assignment.
type opCurrent struct{ m *consumerMember }

func (o opCurrent) apply(g *Group, _ time.Time) {
	cg := g.cg
	cur, ok := cg.members[o.m.id]
	if !ok {
		cur = newConsumerMember(o.m.id)
	} else {
		cur = cur.clone()
	}
	cur.epoch, cur.prevEpoch, cur.state = o.m.epoch, o.m.prevEpoch, o.m.state
	cur.assigned, cur.pendingRevocation = o.m.assigned.clone(), o.m.pendingRevocation.clone()
	cg.putMember(cur)
}

// opCurrentTombstone clears a member's assignment ahead of its removal.
type opCurrentTombstone struct{ id string }

func (o opCurrentTombstone) apply(g *Group, _ time.Time) {
	cg := g.cg
	cur, ok := cg.members[o.id]
	if !ok {
		return
	}
	cur = cur.clone()
	cur.epoch, cur.prevEpoch, cur.state = leaveGroupMemberEpoch, leaveGroupMemberEpoch, memberStable
	cur.assigned, cur.pendingRevocation = partitionEpochs{}, partitionEpochs{}
	cg.putMember(cur)
}

// opRegex is ConsumerGroupRegularExpression.
type opRegex struct {
	regex    string
	resolved resolvedRegex
}

func (o opRegex) apply(g *Group, _ time.Time) { g.cg.regexes[o.regex] = o.resolved }

type opRegexTombstone struct{ regex string }

func (o opRegexTombstone) apply(g *Group, _ time.Time) { delete(g.cg.regexes, o.regex) }

// opClassicTombstone is the classic group's metadata tombstone written when
// an empty classic group becomes a consumer group.
type opClassicTombstone struct{}

func (opClassicTombstone) apply(g *Group, _ time.Time) { g.resetMembership() }

func (opClassicTombstone) record(groupID string) Record { return groupTombstone(groupID) }
