package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Classic-protocol members of a consumer group (during an online
// migration), Kafka's classicGroup*ToConsumerGroup: their JoinGroup runs
// the consumer protocol's heartbeat logic with the subscription decoded
// from the embedded protocol, SyncGroup hands out the member's current
// assignment, and Heartbeat tells them to rejoin while they have not
// converged.

// classicJoinConsumer handles a JoinGroup to a consumer group.
func (m *Manager) classicJoinConsumer(now time.Time, g *Group, req JoinRequest, reply func(JoinResult)) {
	m.cgNow = now
	fail := func(code int16) {
		m.cgFlush(func(error) { reply(JoinResult{ErrorCode: code, MemberID: req.MemberID, GenerationID: -1}) })
	}
	cg := g.cg
	if m.cfg.ConsumerMigrationPolicy == "disabled" {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	memberID := req.MemberID
	unknown := memberID == ""
	if unknown {
		memberID = m.cfg.consumerMemberID()
	}
	if err := m.checkGroupFull(cg, memberID, req.InstanceID); err != nil {
		fail(kerr.GroupMaxSizeReached.Code)
		return
	}
	if !cg.supportsClassicProtocols(req.ProtocolType, req.Protocols) {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	if unknown && req.InstanceID == nil && req.RequireKnownMemberID {
		reply(JoinResult{ErrorCode: kerr.MemberIDRequired.Code, MemberID: memberID, GenerationID: -1})
		return
	}
	sub, ok := parseSubscription(req.Protocols[0].Metadata)
	if !ok {
		fail(kerr.InconsistentGroupProtocol.Code)
		return
	}
	member, err := m.classicMember(g, memberID, req.InstanceID, unknown)
	if err != nil {
		fail(err.(*heartbeatError).code)
		return
	}
	topics := m.topics()
	updated := member.clone()
	updated.instanceID = req.InstanceID
	if sub.rack != nil {
		updated.rackID = sub.rack
	}
	updated.rebalanceTimeoutMs = int32(req.RebalanceTimeout.Milliseconds())
	updated.subscribedNames = sub.topics
	updated.regex = ""
	updated.clientID, updated.clientHost = req.ClientID, req.ClientHost
	updated.classic = &classicMemberMetadata{sessionTimeoutMs: int32(req.SessionTimeout.Milliseconds()), protocols: cloneProtocols(req.Protocols)}
	if m.checkRecordSize(opMember{updated}, g.id) != nil {
		fail(kerr.UnknownServerError.Code)
		return
	}
	changed := !slices.Equal(member.subscribedNames, updated.subscribedNames) || member.regex != ""
	if !updated.sameMetadata(member) || cg.members[updated.id] == nil || !sameClassic(member.classic, updated.classic) {
		m.cgDo(g, opMember{updated})
	}
	m.maybeBumpGroupEpoch(now, g, changed, topics)
	if err := m.maybeUpdateTarget(now, g, topics); err != nil {
		fail(kerr.UnknownServerError.Code)
		return
	}
	owned := ownedFromSubscription(sub, topics)
	next, err := m.reconcileMember(now, g, cg.members[memberID], changed, owned, topics)
	if err != nil {
		fail(err.(*heartbeatError).code)
		return
	}
	next.sessionDeadline = now.Add(req.SessionTimeout)
	next.rebalanceDeadline = time.Time{} // it rejoined
	res := JoinResult{GenerationID: next.epoch, ProtocolType: strPtr("consumer"), ProtocolName: strPtr(req.Protocols[0].Name), MemberID: memberID}
	m.cgFlush(func(werr error) {
		if werr != nil {
			reply(JoinResult{ErrorCode: heartbeatWriteErrorCode(werr), MemberID: memberID, GenerationID: -1})
			return
		}
		reply(res)
	})
}

// classicMember finds or makes the member a classic JoinGroup names; a
// static member rejoining replaces its predecessor.
func (m *Manager) classicMember(g *Group, id string, instanceID *string, unknown bool) (*consumerMember, error) {
	cg := g.cg
	if instanceID == nil {
		// A member id not in the group is the one MEMBER_ID_REQUIRED
		// handed out: Kafka creates the member then.
		if mem, ok := cg.members[id]; ok {
			return mem, nil
		}
		return newConsumerMember(id), nil
	}
	oldID, exists := cg.static[*instanceID]
	switch {
	case !exists:
		return newConsumerMember(id), nil
	case oldID == id:
		return cg.members[id], nil
	case !unknown:
		return nil, hbErr(kerr.FencedInstanceID.Code, "Static member %s with instance id %s was fenced by member %s.", id, *instanceID, oldID)
	}
	return m.staticMember(g, id, 0, *instanceID, nil, true)
}

// supportsClassicProtocols is Kafka's check of a classic member's
// protocols against the classic members already in the group.
func (cg *consumerGroup) supportsClassicProtocols(protocolType string, ps []Protocol) bool {
	if protocolType != "consumer" || len(ps) == 0 {
		return false
	}
	for _, p := range ps {
		all := true
		for _, mem := range cg.members {
			if mem.classic != nil && !protocolNamed(mem.classic.protocols, p.Name) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

func protocolNamed(ps []Protocol, name string) bool {
	return slices.ContainsFunc(ps, func(p Protocol) bool { return p.Name == name })
}

func sameClassic(a, b *classicMemberMetadata) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a.sessionTimeoutMs != b.sessionTimeoutMs || len(a.protocols) != len(b.protocols) {
		return false
	}
	for i := range a.protocols {
		if a.protocols[i].Name != b.protocols[i].Name || string(a.protocols[i].Metadata) != string(b.protocols[i].Metadata) {
			return false
		}
	}
	return true
}

// ownedFromSubscription is what a classic member says it owns (its
// subscription's owned partitions: empty for an eager member, which has
// revoked everything before rejoining).
func ownedFromSubscription(sub parsedSubscription, topics Topics) []TopicPartitions {
	owned := []TopicPartitions{}
	for name, parts := range sub.owned {
		if t, ok := topics.ByName(name); ok {
			owned = append(owned, TopicPartitions{TopicID: t.ID, Partitions: parts})
		}
	}
	return owned
}

// classicMemberOf checks a classic request's member against a consumer
// group: it must exist (by id, or by instance id when given) and use the
// classic protocol.
func (cg *consumerGroup) classicMemberOf(id string, instanceID *string) (*consumerMember, int16) {
	if instanceID != nil {
		cur, ok := cg.static[*instanceID]
		if !ok {
			return nil, kerr.UnknownMemberID.Code
		}
		if cur != id {
			return nil, kerr.FencedInstanceID.Code
		}
	}
	mem, ok := cg.members[id]
	if !ok || !mem.usesClassic() {
		return nil, kerr.UnknownMemberID.Code
	}
	return mem, 0
}

// classicSyncConsumer handles a SyncGroup to a consumer group: the member
// gets its current assignment.
func (m *Manager) classicSyncConsumer(g *Group, req SyncRequest, reply func(SyncResult)) {
	cg := g.cg
	mem, code := cg.classicMemberOf(req.MemberID, req.InstanceID)
	switch {
	case code != 0:
	case req.GenerationID != mem.epoch:
		code = kerr.IllegalGeneration.Code
	case req.ProtocolType != nil && *req.ProtocolType != "consumer",
		req.ProtocolName != nil && mem.classic.protocols[0].Name != *req.ProtocolName:
		code = kerr.InconsistentGroupProtocol.Code
	case cg.assignmentEpoch > mem.epoch && mem.state != memberUnrevokedPartitions:
		code = kerr.RebalanceInProgress.Code
	}
	if code != 0 {
		reply(SyncResult{ErrorCode: code})
		return
	}
	reply(SyncResult{ProtocolType: strPtr("consumer"), ProtocolName: strPtr(mem.classic.protocols[0].Name), Assignment: classicAssignment(mem, m.topics())})
}

// classicHeartbeatConsumer handles a Heartbeat to a consumer group: a
// member that has not converged to the target is told to rejoin.
func (m *Manager) classicHeartbeatConsumer(now time.Time, g *Group, req HeartbeatRequest) int16 {
	cg := g.cg
	mem, code := cg.classicMemberOf(req.MemberID, req.InstanceID)
	if code != 0 {
		return code
	}
	if req.GenerationID != mem.epoch {
		return kerr.IllegalGeneration.Code
	}
	mem.sessionDeadline = now.Add(time.Duration(mem.classic.sessionTimeoutMs) * time.Millisecond)
	if mem.epoch < cg.assignmentEpoch || mem.state == memberUnrevokedPartitions ||
		mem.state == memberUnreleasedPartitions && !cg.waitingOnUnreleased(mem) {
		// It must rejoin within its rebalance timeout (Kafka's join
		// timeout), or it is fenced and its partitions move on.
		if mem.rebalanceDeadline.IsZero() {
			mem.rebalanceDeadline = now.Add(time.Duration(mem.rebalanceTimeoutMs) * time.Millisecond)
			mem.rebalanceEpoch = mem.epoch
		}
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// waitingOnUnreleased reports whether a partition of the member's target
// is still held by another member.
func (cg *consumerGroup) waitingOnUnreleased(mem *consumerMember) bool {
	if mem.state != memberUnreleasedPartitions {
		return false
	}
	for id, parts := range cg.target[mem.id] {
		for _, p := range parts {
			if !mem.assigned.has(id, p) && cg.ownerEpoch(id, p) != -1 {
				return true
			}
		}
	}
	return false
}

// classicLeaveConsumer handles a LeaveGroup to a consumer group.
func (m *Manager) classicLeaveConsumer(now time.Time, g *Group, leaving []LeaveMember) LeaveResult {
	m.cgNow = now
	res := LeaveResult{Members: make([]int16, len(leaving))}
	for i, l := range leaving {
		if g.cg == nil {
			res.Members[i] = kerr.UnknownMemberID.Code
			continue
		}
		id := l.MemberID
		if id == "" && l.InstanceID != nil {
			cur, ok := g.cg.static[*l.InstanceID]
			if !ok {
				res.Members[i] = kerr.UnknownMemberID.Code
				continue
			}
			id = cur
		}
		if _, code := g.cg.classicMemberOf(id, l.InstanceID); code != 0 {
			// The admin client removes consumer-protocol members too.
			if _, ok := g.cg.members[id]; !ok || l.MemberID != "" {
				res.Members[i] = code
				continue
			}
		}
		m.fenceMember(now, g, id)
	}
	m.cgFlush(nil)
	return res
}
