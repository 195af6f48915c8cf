package group

import (
	"bytes"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Sync handles a SyncGroup request; reply is called exactly once. The
// leader's assignment is answered only once the group record holding it is
// durable.
func (m *Manager) Sync(now time.Time, req SyncRequest, reply func(SyncResult)) {
	fail := func(code int16) { reply(SyncResult{ErrorCode: code}) }
	if req.GroupID == "" {
		fail(kerr.InvalidGroupID.Code)
		return
	}
	g, ok := m.groups[req.GroupID]
	if !ok {
		fail(kerr.UnknownMemberID.Code)
		return
	}
	if g.cg != nil {
		m.classicSyncConsumer(g, req, reply)
		return
	}
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
		fail(code)
		return
	}
	if req.GenerationID != g.generation {
		fail(kerr.IllegalGeneration.Code)
		return
	}
	if (req.ProtocolType != nil && *req.ProtocolType != g.protocolType) ||
		(req.ProtocolName != nil && *req.ProtocolName != g.protocolName) {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	mem := g.members[req.MemberID]
	switch g.state {
	case Empty:
		fail(kerr.UnknownMemberID.Code)
	case PreparingRebalance:
		fail(kerr.RebalanceInProgress.Code)
	case Stable:
		delete(g.pendingSync, mem.id)
		reply(g.syncResult(mem))
	case CompletingRebalance:
		if mem.syncReply != nil {
			old := mem.syncReply
			mem.syncReply = nil
			old(SyncResult{ErrorCode: kerr.RebalanceInProgress.Code})
		}
		mem.syncReply = reply
		mem.lastHeartbeat = now
		delete(g.pendingSync, mem.id)
		if mem.id == g.leader {
			m.storeAssignment(g, now, req.Assignments)
		}
	}
}

func (g *Group) syncResult(mem *member) SyncResult {
	return SyncResult{
		ProtocolType: strPtr(g.protocolType),
		ProtocolName: strPtr(g.protocolName),
		Assignment:   mem.assignment,
	}
}

// storeAssignment persists the leader's assignment and, once durable,
// moves the group to Stable and answers every waiting member.
func (m *Manager) storeAssignment(g *Group, now time.Time, assignments map[string][]byte) {
	generation := g.generation
	pending := make(map[string][]byte, len(g.members))
	for id := range g.members {
		pending[id] = bytes.Clone(assignments[id])
	}
	rec := g.metadataRecordWith(now, pending)
	m.emit([]Record{rec}, func(err error) {
		if g.generation != generation || g.state != CompletingRebalance {
			return // a newer rebalance already answered the waiters
		}
		if err != nil {
			g.failPendingSyncs(writeErrorCode(err))
			g.prepareRebalance(now)
			return
		}
		for id, mem := range g.members {
			mem.assignment = pending[id]
		}
		g.transition(Stable, now)
		m.counters.ClassicRebalances++
		for _, id := range slices.Clone(g.order) {
			mem := g.members[id]
			if mem.syncReply != nil {
				r := mem.syncReply
				mem.syncReply = nil
				r(g.syncResult(mem))
			}
		}
	})
}

// Heartbeat handles a Heartbeat request and returns its error code.
func (m *Manager) Heartbeat(now time.Time, req HeartbeatRequest) int16 {
	if req.GroupID == "" {
		return kerr.InvalidGroupID.Code
	}
	g, ok := m.groups[req.GroupID]
	if !ok {
		return kerr.UnknownMemberID.Code
	}
	if g.cg != nil {
		return m.classicHeartbeatConsumer(now, g, req)
	}
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
		return code
	}
	if req.GenerationID != g.generation {
		return kerr.IllegalGeneration.Code
	}
	mem := g.members[req.MemberID]
	switch g.state {
	case Empty:
		return kerr.UnknownMemberID.Code
	case PreparingRebalance:
		mem.lastHeartbeat = now
		return kerr.RebalanceInProgress.Code
	default:
		mem.lastHeartbeat = now
		return 0
	}
}

// Leave handles a LeaveGroup request (one member before v3, several from v3).
// As in Kafka, leaving a group that does not exist is no group-level error:
// each member gets UNKNOWN_MEMBER_ID.
func (m *Manager) Leave(now time.Time, groupID string, leaving []LeaveMember) LeaveResult {
	if groupID == "" {
		return LeaveResult{ErrorCode: kerr.InvalidGroupID.Code}
	}
	g, ok := m.groups[groupID]
	if !ok {
		return LeaveResult{Members: slices.Repeat([]int16{kerr.UnknownMemberID.Code}, len(leaving))}
	}
	if g.cg != nil {
		return m.classicLeaveConsumer(now, g, leaving)
	}
	if g.state == Dead {
		return LeaveResult{ErrorCode: kerr.CoordinatorNotAvailable.Code}
	}
	res := LeaveResult{Members: make([]int16, len(leaving))}
	var removed bool
	for i, l := range leaving {
		id := l.MemberID
		if id == "" && l.InstanceID != nil {
			// The admin client removes static members by instance id.
			cur, ok := g.static[*l.InstanceID]
			if !ok {
				res.Members[i] = kerr.UnknownMemberID.Code
				continue
			}
			id = cur
		} else if _, ok := g.pending[id]; ok && l.InstanceID == nil {
			delete(g.pending, id)
			g.maybeCompleteJoin(now)
			continue
		} else if code := g.validateMember(id, l.InstanceID); code != 0 {
			res.Members[i] = code
			continue
		}
		g.removeMember(id)
		removed = true
	}
	if removed {
		g.afterRemoval(now)
	}
	return res
}
