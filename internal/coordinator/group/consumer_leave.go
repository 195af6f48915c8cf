package group

// Members leaving: a leave heartbeat, a session or rebalance timeout.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// consumerLeave handles a heartbeat with epoch -1 (leave) or -2 (a static
// member leaving for a while: it keeps its assignment until its session
// ends).
func (m *Manager) consumerLeave(now time.Time, req ConsumerHeartbeatRequest) (ConsumerHeartbeatResult, error) {
	if _, ok := m.groups[req.GroupID]; !ok {
		return ConsumerHeartbeatResult{}, hbErr(kerr.GroupIDNotFound.Code, "Group %s not found.", req.GroupID)
	}
	g, err := m.consumerGroupFor(now, req.GroupID, false)
	if err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	cg := g.cg
	res := ConsumerHeartbeatResult{MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
	if req.InstanceID == nil {
		if _, ok := cg.members[req.MemberID]; !ok {
			return res, hbErr(kerr.UnknownMemberID.Code, "Member %s is not a member of group %s.", req.MemberID, req.GroupID)
		}
		m.fenceMember(now, g, req.MemberID)
		return res, nil
	}
	id, ok := cg.static[*req.InstanceID]
	if !ok {
		return res, hbErr(kerr.UnknownMemberID.Code, "Instance id %s is unknown.", *req.InstanceID)
	}
	if id != req.MemberID {
		return res, hbErr(kerr.FencedInstanceID.Code, "Static member %s with instance id %s was fenced by member %s.", req.MemberID, *req.InstanceID, id)
	}
	if req.MemberEpoch == leaveGroupStaticMemberEpoch {
		leaving := cg.members[id].clone()
		leaving.epoch = leaveGroupStaticMemberEpoch
		leaving.pendingRevocation = partitionEpochs{}
		for _, parts := range leaving.assigned {
			for p := range parts {
				parts[p] = 0
			}
		}
		m.cgDo(g, opCurrent{leaving})
		return ConsumerHeartbeatResult{MemberID: id, MemberEpoch: leaveGroupStaticMemberEpoch}, nil
	}
	m.fenceMember(now, g, id)
	return res, nil
}

// fenceMember removes a member (leave, session or rebalance timeout) and
// bumps the group epoch so the others take its partitions.
func (m *Manager) fenceMember(now time.Time, g *Group, id string) {
	cg := g.cg
	if cg == nil {
		return
	}
	mem := cg.members[id]
	if mem == nil {
		return
	}
	if m.shouldDowngrade(cg, id) {
		m.convertToClassic(now, g, id)
		return
	}
	last := len(cg.members) == 1
	m.cgRemoveMember(g, id)
	if mem.regex != "" && cg.regexCount(mem.regex) == 0 {
		m.cgDo(g, opRegexTombstone{mem.regex})
	}
	hash := metadataHashOf(cg.subscribedTopicNames(), m.topics())
	epoch := cg.groupEpoch + 1
	m.cgDo(g, opEpoch{epoch: epoch, hash: hash})
	if last {
		m.cgDo(g, opTargetMeta{epoch: epoch, timestamp: 0})
	}
}

// cgRemoveMember writes a member's tombstones: current assignment, target,
// then its metadata (Kafka's order).
func (m *Manager) cgRemoveMember(g *Group, id string) {
	m.cgDo(g, opCurrentTombstone{id})
	m.cgDo(g, opTargetTombstone{id})
	m.cgDo(g, opMemberTombstone{id})
}

// tickConsumer fences the members whose session or rebalance timeout has
// passed.
func (m *Manager) tickConsumer(now time.Time, g *Group) {
	cg := g.cg
	for _, id := range cg.memberIDs() {
		if g.cg != cg {
			// A fence turned the group back into a classic group: its
			// timers are the classic group's now.
			break
		}
		mem := cg.members[id]
		if mem == nil {
			continue
		}
		expired := !mem.sessionDeadline.IsZero() && !now.Before(mem.sessionDeadline)
		revokeLate := !mem.rebalanceDeadline.IsZero() && !now.Before(mem.rebalanceDeadline) && mem.epoch == mem.rebalanceEpoch
		if expired || revokeLate {
			m.fenceMember(now, g, id)
		}
	}
	m.cgFlush(nil)
}

// consumerDeadline is the group's earliest member timer, or zero.
func (cg *consumerGroup) nextDeadline() time.Time {
	var next time.Time
	for _, mem := range cg.members {
		for _, t := range []time.Time{mem.sessionDeadline, mem.rebalanceDeadline} {
			if !t.IsZero() && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
	}
	return next
}
