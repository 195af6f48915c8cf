package group

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Join handles a JoinGroup request. reply is called exactly once: at once
// for an error or an immediate answer, or when the rebalance completes.
func (m *Manager) Join(now time.Time, req JoinRequest, reply func(JoinResult)) {
	fail := func(code int16) {
		reply(JoinResult{ErrorCode: code, MemberID: req.MemberID, GenerationID: -1})
	}
	if req.GroupID == "" {
		fail(kerr.InvalidGroupID.Code)
		return
	}
	if req.SessionTimeout < m.cfg.MinSessionTimeout || req.SessionTimeout > m.cfg.MaxSessionTimeout {
		fail(kerr.InvalidSessionTimeout.Code)
		return
	}
	if m.IsShareGroup(req.GroupID) {
		// Not a classic group: Kafka 4.4 answers this.
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	g, ok := m.groups[req.GroupID]
	if ok && g.cg != nil {
		if len(g.cg.members) > 0 {
			// A classic member joins a live consumer group (an online
			// migration).
			m.classicJoinConsumer(now, g, req, reply)
			return
		}
		// An empty consumer group becomes a classic group; its offsets
		// stay.
		m.emit(g.cg.tombstones(g.id), nil)
		g.cg = nil
	}
	if !ok {
		if req.MemberID != "" {
			fail(kerr.UnknownMemberID.Code)
			return
		}
		g = newGroup(m, req.GroupID, now)
		m.groups[req.GroupID] = g
	}
	if g.state == Dead {
		fail(kerr.CoordinatorNotAvailable.Code)
		return
	}
	if !g.supportsProtocols(req.ProtocolType, req.Protocols) {
		fail(kerr.InconsistentGroupProtocol.Code)
		m.dropIfUnused(g)
		return
	}
	if req.MemberID == "" {
		m.joinNewMember(g, now, req, reply)
	} else {
		m.joinKnownMember(g, now, req, reply)
	}
	m.dropIfUnused(g)
}

// dropIfUnused forgets a group created by a join that did not add anyone.
func (m *Manager) dropIfUnused(g *Group) {
	if g.state == Empty && len(g.members) == 0 && len(g.pending) == 0 && len(g.offsets) == 0 && g.generation == 0 {
		delete(m.groups, g.id)
	}
}

func (m *Manager) full(g *Group) bool {
	return len(g.members)+len(g.pending) >= m.cfg.MaxSize
}

func (m *Manager) joinNewMember(g *Group, now time.Time, req JoinRequest, reply func(JoinResult)) {
	if req.InstanceID != nil {
		if old, ok := g.static[*req.InstanceID]; ok {
			m.replaceStaticMember(g, now, old, req, reply)
			return
		}
	}
	if m.full(g) {
		reply(JoinResult{ErrorCode: kerr.GroupMaxSizeReached.Code, GenerationID: -1})
		return
	}
	id := m.cfg.memberID(req.ClientID, req.InstanceID)
	if req.InstanceID == nil && req.RequireKnownMemberID {
		// KIP-394: hand out the id and wait for the client to come back
		// with it, so a client that never does leaves no member behind.
		g.pending[id] = now.Add(req.SessionTimeout)
		reply(JoinResult{ErrorCode: kerr.MemberIDRequired.Code, MemberID: id, GenerationID: -1})
		return
	}
	m.addMemberAndRebalance(g, now, id, req, reply)
}

func (m *Manager) addMemberAndRebalance(g *Group, now time.Time, id string, req JoinRequest, reply func(JoinResult)) {
	mem := &member{
		id: id, instanceID: req.InstanceID, clientID: req.ClientID, clientHost: req.ClientHost,
		sessionTimeout: req.SessionTimeout, rebalanceTimeout: req.RebalanceTimeout,
		protocolType: req.ProtocolType, protocols: cloneProtocols(req.Protocols),
		joinReply: reply, isNew: true, joinedAt: now,
	}
	if len(g.members) == 0 {
		g.protocolType = req.ProtocolType
	}
	g.addMember(mem, now)
	m.rebalanceOrCompleteJoin(g, now)
}

func (m *Manager) rebalanceOrCompleteJoin(g *Group, now time.Time) {
	switch g.state {
	case Stable, CompletingRebalance, Empty:
		g.prepareRebalance(now)
		g.maybeCompleteJoin(now)
	case PreparingRebalance:
		g.maybeCompleteJoin(now)
	}
}

func (m *Manager) joinKnownMember(g *Group, now time.Time, req JoinRequest, reply func(JoinResult)) {
	if _, ok := g.pending[req.MemberID]; ok {
		delete(g.pending, req.MemberID)
		if req.InstanceID != nil {
			// A static member never gets a pending id; treat it as unknown.
			reply(JoinResult{ErrorCode: kerr.UnknownMemberID.Code, MemberID: req.MemberID, GenerationID: -1})
			return
		}
		m.addMemberAndRebalance(g, now, req.MemberID, req, reply)
		return
	}
	if code := g.validateMember(req.MemberID, req.InstanceID); code != 0 {
		reply(JoinResult{ErrorCode: code, MemberID: req.MemberID, GenerationID: -1})
		return
	}
	mem := g.members[req.MemberID]
	switch g.state {
	case PreparingRebalance:
		m.updateMemberAndRebalance(g, now, mem, req, reply)
	case CompletingRebalance:
		if mem.sameProtocols(req.Protocols) {
			// The member lost the join response: resend it.
			reply(g.joinResult(mem, false))
			return
		}
		m.updateMemberAndRebalance(g, now, mem, req, reply)
	case Stable:
		if mem.id == g.leader || !mem.sameProtocols(req.Protocols) {
			// The leader rejoins to force a rebalance (new topics, say);
			// a changed subscription needs one too.
			m.updateMemberAndRebalance(g, now, mem, req, reply)
			return
		}
		reply(g.joinResult(mem, false))
	default:
		reply(JoinResult{ErrorCode: kerr.UnknownMemberID.Code, MemberID: req.MemberID, GenerationID: -1})
	}
}

// validateMember checks a member id and, for a static member, that it is
// the instance's current member (else FENCED_INSTANCE_ID).
func (g *Group) validateMember(memberID string, instanceID *string) int16 {
	if instanceID != nil {
		current, ok := g.static[*instanceID]
		if !ok {
			return kerr.UnknownMemberID.Code
		}
		if current != memberID {
			return kerr.FencedInstanceID.Code
		}
	}
	if _, ok := g.members[memberID]; !ok {
		return kerr.UnknownMemberID.Code
	}
	return 0
}

func (m *Manager) updateMemberAndRebalance(g *Group, now time.Time, mem *member, req JoinRequest, reply func(JoinResult)) {
	if mem.joinReply != nil {
		// A second join (the client gave up on the first and retried on a
		// new connection) replaces the first, which is answered so its
		// connection is not left waiting.
		old := mem.joinReply
		mem.joinReply = nil
		old(JoinResult{ErrorCode: kerr.RebalanceInProgress.Code, MemberID: mem.id, GenerationID: -1})
	}
	mem.protocols = cloneProtocols(req.Protocols)
	mem.sessionTimeout = req.SessionTimeout
	mem.rebalanceTimeout = req.RebalanceTimeout
	mem.clientID, mem.clientHost = req.ClientID, req.ClientHost
	mem.joinReply = reply
	mem.lastHeartbeat = now
	m.rebalanceOrCompleteJoin(g, now)
}

// replaceStaticMember handles a static member rejoining with no member id
// (a restart): the instance gets a new member id and the old one is fenced.
// A stable group with an unchanged subscription keeps its assignment
// without a rebalance (KIP-345).
func (m *Manager) replaceStaticMember(g *Group, now time.Time, oldID string, req JoinRequest, reply func(JoinResult)) {
	old := g.members[oldID]
	newID := m.cfg.memberID(req.ClientID, req.InstanceID)
	if old.joinReply != nil {
		r := old.joinReply
		old.joinReply = nil
		r(JoinResult{ErrorCode: kerr.FencedInstanceID.Code, MemberID: oldID, GenerationID: -1})
	}
	if old.syncReply != nil {
		r := old.syncReply
		old.syncReply = nil
		r(SyncResult{ErrorCode: kerr.FencedInstanceID.Code})
	}
	delete(g.members, oldID)
	old.id = newID
	g.members[newID] = old
	for i, id := range g.order {
		if id == oldID {
			g.order[i] = newID
		}
	}
	g.static[*req.InstanceID] = newID
	if g.leader == oldID {
		g.leader = newID
	}
	if g.pendingSync[oldID] {
		delete(g.pendingSync, oldID)
		g.pendingSync[newID] = true
	}
	old.clientID, old.clientHost = req.ClientID, req.ClientHost
	old.sessionTimeout, old.rebalanceTimeout = req.SessionTimeout, req.RebalanceTimeout
	old.lastHeartbeat = now
	switch g.state {
	case Stable:
		if !old.sameProtocols(req.Protocols) {
			m.updateMemberAndRebalance(g, now, old, req, reply)
			return
		}
		isLeader := newID == g.leader
		res := g.joinResult(old, isLeader)
		generation := g.generation
		// The new member id must be durable before the client uses it.
		g.mgr.emit([]Record{g.metadataRecord(now)}, func(err error) {
			if err != nil {
				reply(JoinResult{ErrorCode: writeErrorCode(err), MemberID: "", GenerationID: -1})
				if g.generation == generation && g.state == Stable {
					g.prepareRebalance(now)
				}
				return
			}
			reply(res)
		})
	default:
		m.updateMemberAndRebalance(g, now, old, req, reply)
	}
}
