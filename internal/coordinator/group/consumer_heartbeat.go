package group

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// heartbeatError is a heartbeat refused with a Kafka error and message.
type heartbeatError struct {
	code int16
	msg  string
}

func (e *heartbeatError) Error() string { return e.msg }
func hbErr(code int16, format string, args ...any) *heartbeatError {
	return &heartbeatError{code: code, msg: fmt.Sprintf(format, args...)}
}

// ConsumerHeartbeat handles a ConsumerGroupHeartbeat (the request already
// validated, ValidateConsumerHeartbeat). reply is called once, after the
// records the heartbeat wrote are durable.
func (m *Manager) ConsumerHeartbeat(now time.Time, req ConsumerHeartbeatRequest, reply func(ConsumerHeartbeatResult)) {
	m.cgNow = now
	defer func() { m.canDescribe = nil }() // do not keep the request
	var res ConsumerHeartbeatResult
	var err error
	if req.MemberEpoch == leaveGroupMemberEpoch || req.MemberEpoch == leaveGroupStaticMemberEpoch {
		res, err = m.consumerLeave(now, req)
	} else {
		res, err = m.consumerHeartbeat(now, req)
	}
	if err != nil {
		// What the operation changed before it failed (a group created)
		// is written all the same, so the log matches the state.
		code, msg := kerr.UnknownServerError.Code, err.Error()
		if he, ok := err.(*heartbeatError); ok {
			code = he.code
		}
		m.forgetEmptyNew(req.GroupID)
		m.cgFlush(func(error) {
			reply(ConsumerHeartbeatResult{ErrorCode: code, ErrorMessage: &msg, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch})
		})
		return
	}
	m.cgFlush(func(werr error) {
		if werr != nil {
			reply(ConsumerHeartbeatResult{ErrorCode: heartbeatWriteErrorCode(werr), MemberID: req.MemberID, MemberEpoch: req.MemberEpoch})
			return
		}
		reply(res)
	})
}

func (m *Manager) consumerHeartbeat(now time.Time, req ConsumerHeartbeatRequest) (ConsumerHeartbeatResult, error) {
	join := req.MemberEpoch == 0
	if err := m.precheckHeartbeat(req); err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	g, err := m.consumerGroupFor(now, req.GroupID, join)
	if err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	cg := g.cg
	if err := m.checkGroupFull(cg, req.MemberID, req.InstanceID); err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	memberID := req.MemberID
	if memberID == "" {
		memberID = newUUIDString()
	}
	var member *consumerMember
	if req.InstanceID == nil {
		member, err = m.dynamicMember(cg, req.GroupID, memberID, req.MemberEpoch, req.Owned, join)
	} else {
		member, err = m.staticMember(g, memberID, req.MemberEpoch, *req.InstanceID, req.Owned, join)
	}
	if err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	topics := m.topics()
	updated := member.clone()
	if req.InstanceID != nil {
		updated.instanceID = req.InstanceID
	}
	if req.RackID != nil {
		updated.rackID = req.RackID
	}
	if req.RebalanceTimeoutMs != -1 {
		updated.rebalanceTimeoutMs = req.RebalanceTimeoutMs
	}
	if req.ServerAssignor != nil {
		updated.serverAssignor = req.ServerAssignor
	}
	if req.SubscribedTopicNames != nil {
		updated.subscribedNames = slices.Sorted(slices.Values(req.SubscribedTopicNames))
		updated.subscribedNames = slices.Compact(updated.subscribedNames)
	}
	if req.SubscribedTopicRegex != nil {
		updated.regex = *req.SubscribedTopicRegex
	}
	updated.clientID, updated.clientHost = req.ClientID, req.ClientHost
	updated.classic = nil

	namesChanged := !slices.Equal(member.subscribedNames, updated.subscribedNames)
	m.canDescribe = req.CanDescribe
	regexChanged, err := m.updateRegexes(now, g, member, updated, topics)
	if err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	def := m.cfg.defaultAssignor().Name()
	assignorChanged := cg.preferredAssignor(member, member, def) != cg.preferredAssignor(member, updated, def)
	if !updated.sameMetadata(member) || cg.members[updated.id] == nil {
		m.cgDo(g, opMember{updated})
	}
	subscriptionChanged := namesChanged || regexChanged
	m.maybeBumpGroupEpoch(now, g, subscriptionChanged || assignorChanged, topics)
	updated = cg.members[updated.id]
	if err := m.maybeUpdateTarget(now, g, topics); err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	updated, err = m.reconcileMember(now, g, updated, subscriptionChanged, req.Owned, topics)
	if err != nil {
		return ConsumerHeartbeatResult{}, err
	}
	session, heartbeat := m.cfg.consumerTimeouts(g.id)
	updated.sessionDeadline = now.Add(session)
	res := ConsumerHeartbeatResult{MemberID: updated.id, MemberEpoch: updated.epoch, HeartbeatInterval: heartbeat}
	full := req.RebalanceTimeoutMs != -1 && (req.SubscribedTopicNames != nil || req.SubscribedTopicRegex != nil) && req.Owned != nil
	if join || full || !member.assigned.sameKeys(updated.assigned) {
		res.Assignment = updated.assigned.topicPartitions()
	}
	return res, nil
}

// consumerGroupFor returns the consumer group id names, creating it when
// create is set. An empty classic group is replaced by a consumer group; a
// classic group with members is not a consumer group (GROUP_ID_NOT_FOUND).
func (m *Manager) consumerGroupFor(now time.Time, id string, create bool) (*Group, error) {
	if m.IsShareGroup(id) {
		return nil, hbErr(kerr.GroupIDNotFound.Code, "Group %s is not a consumer group.", id)
	}
	g, ok := m.groups[id]
	switch {
	case ok && g.cg != nil:
		return g, nil
	case ok && g.state != Empty && g.state != Dead:
		if !create {
			return nil, hbErr(kerr.GroupIDNotFound.Code, "Group %s is not a consumer group.", id)
		}
		if err := m.upgradeRefusal(g); err != nil {
			return nil, err
		}
		m.convertToConsumer(now, g)
		return g, nil
	case !create && ok && g.state != Dead:
		return nil, hbErr(kerr.GroupIDNotFound.Code, "Group %s is not a consumer group.", id)
	case !create:
		return nil, hbErr(kerr.GroupIDNotFound.Code, "Consumer group %s not found.", id)
	}
	if !ok {
		g = newGroup(m, id, now)
		m.groups[id] = g
	} else {
		// An empty classic group (or one that only holds offsets)
		// becomes a consumer group: its metadata goes (offsets stay), as
		// in Kafka.
		m.cgDo(g, opClassicTombstone{})
	}
	// The new group is written with its first member and epoch, as in
	// Kafka; forgetEmptyNew drops it if the heartbeat fails before.
	g.cg = newConsumerGroup()
	return g, nil
}

// forgetEmptyNew drops a consumer group a failed heartbeat created: it
// has no member, no epoch and nothing written.
func (m *Manager) forgetEmptyNew(id string) {
	g, ok := m.groups[id]
	if !ok || g.cg == nil || len(g.cg.members) > 0 || g.cg.groupEpoch > 1 {
		return
	}
	g.cg = nil
	m.dropIfForgotten(g)
}
func (m *Manager) checkGroupFull(cg *consumerGroup, memberID string, instanceID *string) error {
	if instanceID != nil {
		if _, ok := cg.static[*instanceID]; ok {
			return nil
		}
	}
	if _, ok := cg.members[memberID]; ok && memberID != "" {
		return nil
	}
	if len(cg.members) >= m.cfg.ConsumerMaxSize {
		return hbErr(kerr.GroupMaxSizeReached.Code, "The consumer group has reached its maximum capacity of %d members.", m.cfg.ConsumerMaxSize)
	}
	return nil
}
func (m *Manager) dynamicMember(cg *consumerGroup, groupID, id string, epoch int32, owned []TopicPartitions, create bool) (*consumerMember, error) {
	mem, ok := cg.members[id]
	if !ok {
		if !create {
			return nil, hbErr(kerr.UnknownMemberID.Code, "Member %s is not a member of group %s.", id, groupID)
		}
		return newConsumerMember(id), nil
	}
	if err := checkMemberEpoch(mem, epoch, owned); err != nil {
		return nil, err
	}
	return mem, nil
}

// staticMember finds or makes the member of a group.instance.id. A static
// member rejoining (epoch 0) after a temporary leave (epoch -2) takes over
// its predecessor's assignment under its new member id.
func (m *Manager) staticMember(g *Group, id string, epoch int32, instanceID string, owned []TopicPartitions, create bool) (*consumerMember, error) {
	cg := g.cg
	oldID, exists := cg.static[instanceID]
	if create {
		if !exists {
			if mem, ok := cg.members[id]; ok {
				return mem, nil
			}
			return newConsumerMember(id), nil
		}
		old := cg.members[oldID]
		if !old.usesClassic() && old.epoch != leaveGroupStaticMemberEpoch {
			return nil, hbErr(kerr.UnreleasedInstanceID.Code, "Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", id, instanceID, oldID)
		}
		repl := old.clone()
		repl.id = id
		repl.epoch, repl.prevEpoch = 0, 0
		target := cg.target[oldID]
		m.cgRemoveMember(g, oldID)
		m.cgDo(g, opMember{repl})
		m.cgDo(g, opTarget{memberID: id, assignment: target})
		m.cgDo(g, opCurrent{repl})
		return cg.members[id], nil
	}
	if !exists {
		return nil, hbErr(kerr.UnknownMemberID.Code, "Instance id %s is unknown.", instanceID)
	}
	if oldID != id {
		return nil, hbErr(kerr.FencedInstanceID.Code, "Static member %s with instance id %s was fenced by member %s.", id, instanceID, oldID)
	}
	mem := cg.members[oldID]
	if err := checkMemberEpoch(mem, epoch, owned); err != nil {
		return nil, err
	}
	return mem, nil
}

// checkMemberEpoch fences a member whose epoch is ahead of the
// coordinator's, or behind it unless it is the previous epoch and the
// member owns nothing it should not (its last answer was lost).
func checkMemberEpoch(mem *consumerMember, received int32, owned []TopicPartitions) error {
	if received == 0 {
		return nil
	}
	if received > mem.epoch {
		return hbErr(kerr.FencedMemberEpoch.Code, "The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", received, mem.epoch)
	}
	if received < mem.epoch && !(received == mem.prevEpoch && isSubset(owned, mem.assigned)) {
		return hbErr(kerr.FencedMemberEpoch.Code, "The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", received, mem.epoch)
	}
	return nil
}
func isSubset(owned []TopicPartitions, assigned partitionEpochs) bool {
	if owned == nil {
		return false
	}
	for _, tp := range owned {
		for _, p := range tp.Partitions {
			if !assigned.has(tp.TopicID, p) {
				return false
			}
		}
	}
	return true
}

// maybeBumpGroupEpoch bumps the group epoch when the subscriptions changed
// or the subscribed topics did (created, deleted, grown, newly matched).
func (m *Manager) maybeBumpGroupEpoch(now time.Time, g *Group, bump bool, topics Topics) {
	cg := g.cg
	if !bump && cg.topicsVersion == topics.Version() {
		return
	}
	if cg.topicsVersion != topics.Version() && m.refreshRegexes(g, topics, now) {
		bump = true
	}
	cg.topicsVersion = topics.Version()
	hash := metadataHashOf(cg.subscribedTopicNames(), topics)
	if hash != cg.metadataHash {
		bump = true
	}
	if bump {
		m.cgDo(g, opEpoch{epoch: cg.groupEpoch + 1, hash: hash})
	}
}

// maybeUpdateTarget computes a new target assignment when the group epoch
// has moved past it.
func (m *Manager) maybeUpdateTarget(now time.Time, g *Group, topics Topics) error {
	cg := g.cg
	if cg.assignmentEpoch >= cg.groupEpoch {
		return nil
	}
	name := cg.preferredAssignor(nil, nil, m.cfg.defaultAssignor().Name())
	a, ok := m.cfg.assignor(name)
	if !ok {
		a = m.cfg.defaultAssignor()
	}
	target, err := cg.computeTarget(a, nil, topics)
	if err != nil {
		return hbErr(kerr.UnknownServerError.Code, "Failed to compute a new target assignment for epoch %d: %v", cg.groupEpoch, err)
	}
	for _, id := range cg.memberIDs() {
		if !equalAssignment(cg.target[id], target[id]) {
			m.cgDo(g, opTarget{memberID: id, assignment: target[id]})
		}
	}
	m.cgDo(g, opTargetMeta{epoch: cg.groupEpoch, timestamp: now.UnixMilli()})
	return nil
}

// reconcileMember moves the member one step toward its target and arms or
// disarms its rebalance timeout.
func (m *Manager) reconcileMember(now time.Time, g *Group, mem *consumerMember, subscriptionChanged bool, owned []TopicPartitions, topics Topics) (*consumerMember, error) {
	cg := g.cg
	if !subscriptionChanged && mem.isReconciledTo(cg.assignmentEpoch) {
		return mem, nil
	}
	r := reconciler{cg: cg, topics: topics, targetEpoch: cg.assignmentEpoch, target: cg.target[mem.id], subscriptionChanged: subscriptionChanged, owned: owned}
	next, err := r.reconcile(mem)
	if err != nil {
		return nil, hbErr(kerr.FencedMemberEpoch.Code, "%s", err.Error())
	}
	if next == mem || next.sameAssignmentState(mem) {
		return mem, nil
	}
	m.cgDo(g, opCurrent{next})
	next = cg.members[mem.id]
	if !next.usesClassic() {
		if next.state == memberUnrevokedPartitions {
			next.rebalanceDeadline = now.Add(time.Duration(next.rebalanceTimeoutMs) * time.Millisecond)
			next.rebalanceEpoch = next.epoch
		} else {
			next.rebalanceDeadline = time.Time{}
		}
	}
	return next, nil
}

// topics returns the cluster's topics as the coordinator last saw them.
func (m *Manager) topics() Topics {
	if m.cfg.Topics == nil {
		return noTopics{}
	}
	return m.cfg.Topics()
}

type noTopics struct{}

func (noTopics) ByName(string) (TopicInfo, bool)   { return TopicInfo{}, false }
func (noTopics) ByID(kafka.UUID) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) Names() []string                   { return nil }
func (noTopics) Version() int64                    { return 0 }
func newUUIDString() string {
	u, err := kafka.RandomUUID()
	if err != nil {
		panic(err) // crypto/rand does not fail (Go 1.24+)
	}
	return u.String()
}
