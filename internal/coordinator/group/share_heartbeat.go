package group

// ShareGroupHeartbeat (KIP-932) as Kafka 4.4's GroupMetadataManager
// serves it: join with epoch 0 under a member id the client chose, leave
// with -1, fencing by member epoch, a group epoch bumped on subscription
// or topic changes (and when initialized partitions wait to be handed
// out), a target assignment per group epoch, given to each member whole.

import (
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ValidateShareHeartbeat checks a request as Kafka's
// throwIfShareGroupHeartbeatRequestIsInvalid (INVALID_REQUEST and its
// message), before the group is looked at.
func ValidateShareHeartbeat(req ShareHeartbeatRequest) (int16, string) {
	switch {
	case strings.TrimSpace(req.MemberID) == "":
		return kerr.InvalidRequest.Code, "MemberId can't be empty."
	case strings.TrimSpace(req.GroupID) == "":
		return kerr.InvalidRequest.Code, "GroupId can't be empty."
	case req.RackID != nil && strings.TrimSpace(*req.RackID) == "":
		return kerr.InvalidRequest.Code, "RackId can't be empty."
	case req.MemberEpoch == 0 && len(req.SubscribedTopicNames) == 0:
		return kerr.InvalidRequest.Code, "SubscribedTopicNames must be set in first request."
	case req.MemberEpoch < leaveGroupMemberEpoch:
		return kerr.InvalidRequest.Code, "MemberEpoch is invalid."
	}
	return 0, ""
}

// ShareHeartbeat handles a ShareGroupHeartbeat (validated). reply is
// called once, after the records the heartbeat wrote are durable.
func (m *Manager) ShareHeartbeat(now time.Time, req ShareHeartbeatRequest, reply func(ShareHeartbeatResult)) {
	m.cgNow = now
	var res ShareHeartbeatResult
	var err error
	if req.MemberEpoch == leaveGroupMemberEpoch {
		res, err = m.shareLeave(now, req)
	} else {
		res, err = m.shareHeartbeat(now, req)
	}
	if err != nil {
		code, msg := kerr.UnknownServerError.Code, err.Error()
		if he, ok := err.(*heartbeatError); ok {
			code = he.code
		}
		m.forgetEmptyShare(req.GroupID)
		m.cgFlush(func(error) { reply(ShareHeartbeatResult{ErrorCode: code, ErrorMessage: &msg}) })
		return
	}
	m.cgFlush(func(werr error) {
		if werr != nil {
			reply(ShareHeartbeatResult{ErrorCode: heartbeatWriteErrorCode(werr)})
			return
		}
		reply(res)
	})
}

func (m *Manager) shareHeartbeat(now time.Time, req ShareHeartbeatRequest) (ShareHeartbeatResult, error) {
	join := req.MemberEpoch == 0
	sg, err := m.shareGroupFor(req.GroupID, join)
	if err != nil {
		return ShareHeartbeatResult{}, err
	}
	cfg := m.shareCfg()
	if _, known := sg.members[req.MemberID]; len(sg.members) >= cfg.MaxSize && !known {
		return ShareHeartbeatResult{}, hbErr(kerr.GroupMaxSizeReached.Code, "The share group has reached its maximum capacity of %d members.", cfg.MaxSize)
	}
	member, err := shareMemberFor(sg, req.MemberID, req.MemberEpoch, join)
	if err != nil {
		return ShareHeartbeatResult{}, err
	}
	updated := member.clone()
	if req.RackID != nil {
		updated.rackID = req.RackID
	}
	if req.SubscribedTopicNames != nil {
		updated.subscribed = slices.Compact(slices.Sorted(slices.Values(req.SubscribedTopicNames)))
	}
	updated.clientID, updated.clientHost = req.ClientID, req.ClientHost
	_, exists := sg.members[updated.id]
	bump := !slices.Equal(member.subscribed, updated.subscribed)
	if !exists || !updated.sameMetadata(member) {
		m.sgDo(sg, opShareMember{updated})
	}
	topics := m.topics()
	if sg.groupEpoch <= sg.assignmentEpoch && sg.initializedPending(topics) {
		bump = true
	}
	if bump || sg.topicsVersion != topics.Version() {
		hash := metadataHashOf(sg.subscribedNames(nil, ""), topics)
		bump = bump || hash != sg.metadataHash
		if bump {
			m.sgDo(sg, opShareEpoch{epoch: sg.groupEpoch + 1, hash: hash})
		}
		sg.topicsVersion = topics.Version()
	}
	if err := m.maybeUpdateShareTarget(now, sg, topics); err != nil {
		return ShareHeartbeatResult{}, err
	}
	cur := sg.members[updated.id]
	next := m.reconcileShareMember(sg, cur)
	next.sessionDeadline = now.Add(cfg.SessionTimeout)
	res := ShareHeartbeatResult{MemberID: next.id, MemberEpoch: next.epoch, HeartbeatInterval: cfg.HeartbeatInterval}
	if join || !equalAssignment(member.assigned, next.assigned) {
		res.Assignment = topicPartitionsOf(next.assigned)
	}
	res.Initialize = m.maybeInitRequest(now, sg, topics)
	return res, nil
}

// shareGroupFor returns the share group of id, creating it when create is
// set. A group of another type is GROUP_ID_NOT_FOUND, as in Kafka.
func (m *Manager) shareGroupFor(id string, create bool) (*shareGroup, error) {
	if sg, ok := m.share[id]; ok {
		return sg, nil
	}
	if g, ok := m.groups[id]; ok && g.state != Dead {
		return nil, hbErr(kerr.GroupIDNotFound.Code, "Group %s is not a share group.", id)
	}
	if !create {
		return nil, hbErr(kerr.GroupIDNotFound.Code, "Share group %s not found.", id)
	}
	if m.share == nil {
		m.share = make(map[string]*shareGroup)
	}
	// Written with its first member; forgetEmptyShare drops it if the
	// heartbeat fails before.
	sg := newShareGroup(id)
	m.share[id] = sg
	return sg, nil
}

// forgetEmptyShare drops a share group a failed heartbeat created: no
// member, no epoch, nothing written.
func (m *Manager) forgetEmptyShare(id string) {
	if sg, ok := m.share[id]; ok && len(sg.members) == 0 && sg.groupEpoch == 1 && sg.state == nil {
		delete(m.share, id)
	}
}

// shareMemberFor finds or makes the member, checking its epoch as Kafka's
// throwIfShareGroupMemberEpochIsInvalid: 0 always passes (a rejoin), a
// greater epoch is fenced, a smaller one unless it is the previous epoch.
func shareMemberFor(sg *shareGroup, id string, epoch int32, create bool) (*shareMember, error) {
	mem, ok := sg.members[id]
	if !ok {
		if !create {
			return nil, hbErr(kerr.UnknownMemberID.Code, "Member %s is not a member of group %s.", id, sg.id)
		}
		return &shareMember{id: id}, nil
	}
	switch {
	case epoch == 0:
	case epoch > mem.epoch:
		return nil, hbErr(kerr.FencedMemberEpoch.Code, "The share group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", epoch, mem.epoch)
	case epoch < mem.epoch && epoch != mem.prevEpoch:
		return nil, hbErr(kerr.FencedMemberEpoch.Code, "The share group member has a smaller member epoch (%d) than the one known by the group coordinator (%d), and it does not match the previous member epoch (%d). The member must abandon all its partitions and rejoin.", epoch, mem.epoch, mem.prevEpoch)
	}
	return mem, nil
}

// maybeUpdateShareTarget computes a new target assignment when the group
// epoch has moved past it, at most once per assignment interval (as Kafka
// 4.4: members meanwhile stay at the previous assignment epoch, a new
// member with nothing).
func (m *Manager) maybeUpdateShareTarget(now time.Time, sg *shareGroup, topics Topics) error {
	if sg.assignmentEpoch >= sg.groupEpoch {
		return nil
	}
	if last := sg.assignmentTimestamp; last > 0 && now.UnixMilli()-last < m.shareCfg().AssignmentInterval.Milliseconds() {
		return nil
	}
	target, err := sg.computeTarget(nil, topics)
	if err != nil {
		return hbErr(kerr.UnknownServerError.Code, "Failed to compute a new target assignment for epoch %d: %v", sg.groupEpoch, err)
	}
	for _, id := range sg.memberIDs() {
		if old, ok := sg.target[id]; !ok || !equalAssignment(old, target[id]) {
			m.sgDo(sg, opShareTarget{memberID: id, assignment: target[id]})
		}
	}
	m.sgDo(sg, opShareTargetMeta{epoch: sg.groupEpoch, timestamp: now.UnixMilli()})
	return nil
}

// reconcileShareMember moves the member to the target epoch with its
// target assignment whole: share groups revoke nothing incrementally.
func (m *Manager) reconcileShareMember(sg *shareGroup, mem *shareMember) *shareMember {
	target := sg.target[mem.id]
	if mem.epoch == sg.assignmentEpoch && equalAssignment(mem.assigned, target) {
		return mem
	}
	next := mem.clone()
	next.prevEpoch, next.epoch = mem.epoch, sg.assignmentEpoch
	next.assigned = cloneAssignment(target)
	m.sgDo(sg, opShareCurrent{next})
	return sg.members[mem.id]
}

// shareLeave handles a heartbeat with epoch -1.
func (m *Manager) shareLeave(now time.Time, req ShareHeartbeatRequest) (ShareHeartbeatResult, error) {
	sg, ok := m.share[req.GroupID]
	if !ok {
		if _, other := m.groups[req.GroupID]; other {
			return ShareHeartbeatResult{}, hbErr(kerr.GroupIDNotFound.Code, "Group %s is not a share group.", req.GroupID)
		}
		return ShareHeartbeatResult{}, hbErr(kerr.GroupIDNotFound.Code, "Group %s not found.", req.GroupID)
	}
	if _, ok := sg.members[req.MemberID]; !ok {
		return ShareHeartbeatResult{}, hbErr(kerr.UnknownMemberID.Code, "Member %s is not a member of group %s.", req.MemberID, req.GroupID)
	}
	m.fenceShareMember(sg, req.MemberID)
	return ShareHeartbeatResult{MemberID: req.MemberID, MemberEpoch: leaveGroupMemberEpoch}, nil
}

// fenceShareMember removes a member (leave or session timeout) and bumps
// the group epoch with the metadata hash of what the others subscribe to;
// the last member's leaving also moves the target's epoch (with no
// timestamp), as Kafka 4.4 writes it.
func (m *Manager) fenceShareMember(sg *shareGroup, id string) {
	last := len(sg.members) == 1
	hash := metadataHashOf(sg.subscribedNames(nil, id), m.topics())
	m.removeShareMember(sg, id)
	epoch := sg.groupEpoch + 1
	m.sgDo(sg, opShareEpoch{epoch: epoch, hash: hash})
	if last {
		m.sgDo(sg, opShareTargetMeta{epoch: epoch})
	}
}

// tickShare fences the members whose session has passed, group by group
// in id order.
func (m *Manager) tickShare(now time.Time) {
	m.cgNow = now
	for _, gid := range sortedShareIDs(m.share) {
		sg := m.share[gid]
		for _, id := range sg.memberIDs() {
			if d := sg.members[id].sessionDeadline; !d.IsZero() && !now.Before(d) {
				m.fenceShareMember(sg, id)
			}
		}
		m.cgFlush(nil)
	}
}

func sortedShareIDs(share map[string]*shareGroup) []string {
	ids := make([]string, 0, len(share))
	for id := range share {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// shareNextDeadline is the earliest member session of any share group.
func (m *Manager) shareNextDeadline() time.Time {
	var next time.Time
	for _, sg := range m.share {
		if t := sg.nextDeadline(); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// shareFinishLoad gives loaded members a fresh session, as Kafka does.
func (m *Manager) shareFinishLoad(now time.Time) {
	session := m.shareCfg().SessionTimeout
	for _, sg := range m.share {
		for _, mem := range sg.members {
			mem.sessionDeadline = now.Add(session)
		}
	}
}
