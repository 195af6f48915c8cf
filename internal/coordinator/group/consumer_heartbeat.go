package group

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/internal/kafka"
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
	updated.sessionDeadline = now.Add(m.cfg.ConsumerSessionTimeout)
	res := ConsumerHeartbeatResult{MemberID: updated.id, MemberEpoch: updated.epoch, HeartbeatInterval: m.cfg.ConsumerHeartbeatInterval}
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
	if !ok || g.cg == nil || len(g.cg.members) > 0 || g.cg.groupEpoch > 0 {
		return
	}
	g.cg = nil
	m.dropIfForgotten(g)
}

// precheckHeartbeat refuses, before anything changes, a heartbeat that
// would fail half-way: an invalid regex, a subscription too large for its
// record, a full classic group a new member would upgrade. Kafka discards
// a failed operation's records; here the state changes as it goes, so the
// checks come first.
func (m *Manager) precheckHeartbeat(req ConsumerHeartbeatRequest) error {
	g, ok := m.groups[req.GroupID]
	if re := req.SubscribedTopicRegex; re != nil && *re != "" {
		known := false
		if ok && g.cg != nil {
			_, known = g.cg.regexes[*re]
		}
		if !known {
			if _, err := compileTopicRegex(*re); err != nil {
				return hbErr(kerr.InvalidRegularExpression.Code, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", *re, err)
			}
		}
	}
	probe := newConsumerMember(req.MemberID)
	probe.instanceID, probe.rackID, probe.subscribedNames = req.InstanceID, req.RackID, req.SubscribedTopicNames
	probe.serverAssignor, probe.clientID, probe.clientHost = req.ServerAssignor, req.ClientID, req.ClientHost
	if req.SubscribedTopicRegex != nil {
		probe.regex = *req.SubscribedTopicRegex
	}
	if err := m.checkRecordSize(opMember{probe}, req.GroupID); err != nil {
		return err
	}
	if ok && g.cg == nil && g.state != Empty && g.state != Dead && req.MemberEpoch == 0 && len(g.members) >= m.cfg.ConsumerMaxSize {
		return hbErr(kerr.GroupMaxSizeReached.Code, "The consumer group has reached its maximum capacity of %d members.", m.cfg.ConsumerMaxSize)
	}
	return nil
}

// checkRecordSize refuses a member whose metadata record would not fit in
// a write of the offsets partition (a huge subscription), before anything
// is applied: the write would fail and leave the state ahead of the log.
func (m *Manager) checkRecordSize(op cgOp, groupID string) error {
	r := op.record(groupID)
	if n := len(r.Key) + len(r.Value); n > m.cfg.maxRecordBytes() {
		return hbErr(kerr.UnknownServerError.Code, "The member's metadata record of %d bytes exceeds the %d bytes a record of the group coordinator may take.", n, m.cfg.maxRecordBytes())
	}
	return nil
}

// heartbeatWriteErrorCode maps a failed write as Kafka's coordinator does
// for heartbeats: a record too large is UNKNOWN_SERVER_ERROR.
func heartbeatWriteErrorCode(err error) int16 {
	if code := writeErrorCode(err); code != kerr.InvalidCommitOffsetSize.Code {
		return code
	}
	return kerr.UnknownServerError.Code
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

// updateRegexes keeps the group's resolved regular expressions in step
// with the member's; it reports whether the member's regex changed.
func (m *Manager) updateRegexes(now time.Time, g *Group, old, updated *consumerMember, topics Topics) (bool, error) {
	cg := g.cg
	if old.regex == updated.regex {
		return false, nil
	}
	if old.regex != "" && cg.regexCount(old.regex, nil, nil) == 1 && cg.members[old.id] != nil {
		m.cgDo(g, opRegexTombstone{old.regex})
	}
	if updated.regex != "" {
		if _, ok := cg.regexes[updated.regex]; !ok {
			re, err := compileTopicRegex(updated.regex)
			if err != nil {
				return false, hbErr(kerr.InvalidRegularExpression.Code, "SubscribedTopicRegex `%s` is not a valid regular expression: %v.", updated.regex, err)
			}
			m.cgDo(g, opRegex{regex: updated.regex, resolved: resolveRegex(re, topics, now, m.canDescribe)})
		}
	}
	return true, nil
}

// compileTopicRegex compiles a subscription regex as Kafka's RE2J matches
// it: against the whole topic name.
func compileTopicRegex(expr string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err // the error names the member's expression as sent
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}

func resolveRegex(re *regexp.Regexp, topics Topics, now time.Time, canDescribe func(string) bool) resolvedRegex {
	var out []string
	for _, name := range topics.Names() {
		if re.MatchString(name) && (canDescribe == nil || canDescribe(name)) {
			out = append(out, name)
		}
	}
	return resolvedRegex{topics: out, version: topics.Version(), timestamp: now.UnixMilli()}
}

// refreshRegexes re-resolves the group's regexes against newer topics;
// it reports whether any resolved differently.
func (m *Manager) refreshRegexes(g *Group, topics Topics, now time.Time) bool {
	changed := false
	for _, expr := range slices.Sorted(mapKeys(g.cg.regexes)) {
		old := g.cg.regexes[expr]
		if old.version == topics.Version() {
			continue
		}
		re, err := compileTopicRegex(expr)
		if err != nil {
			continue
		}
		next := resolveRegex(re, topics, now, m.canDescribe)
		if !slices.Equal(old.topics, next.topics) {
			changed = true
		}
		m.cgDo(g, opRegex{regex: expr, resolved: next})
	}
	return changed
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
	hash := metadataHashOf(cg.subscribedTopicNames(nil, nil), topics)
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
	if mem.regex != "" && cg.regexCount(mem.regex, nil, nil) == 0 {
		m.cgDo(g, opRegexTombstone{mem.regex})
	}
	hash := metadataHashOf(cg.subscribedTopicNames(nil, nil), m.topics())
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

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func newUUIDString() string {
	u, err := kafka.RandomUUID()
	if err != nil {
		panic(err) // crypto/rand does not fail (Go 1.24+)
	}
	return u.String()
}

// ValidateConsumerHeartbeat is Kafka's check of a ConsumerGroupHeartbeat
// before it reaches the group: it returns INVALID_REQUEST or
// UNSUPPORTED_ASSIGNOR with Kafka's message, or 0.
func (c *Config) ValidateConsumerHeartbeat(req ConsumerHeartbeatRequest, version int16) (int16, string) {
	invalid := func(msg string) (int16, string) { return kerr.InvalidRequest.Code, msg }
	// Kafka's throwIfEmptyString: blank is empty.
	blank := func(s string) bool { return strings.TrimSpace(s) == "" }
	if (version >= 1 || req.MemberEpoch > 0 || req.MemberEpoch == leaveGroupMemberEpoch) && blank(req.MemberID) {
		return invalid("MemberId can't be empty.")
	}
	switch {
	case blank(req.GroupID):
		return invalid("GroupId can't be empty.")
	case req.InstanceID != nil && blank(*req.InstanceID):
		return invalid("InstanceId can't be empty.")
	case req.RackID != nil && blank(*req.RackID):
		return invalid("RackId can't be empty.")
	}
	switch {
	case req.MemberEpoch == 0:
		if req.RebalanceTimeoutMs == -1 {
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		}
		if req.Owned == nil || len(req.Owned) > 0 {
			return invalid("TopicPartitions must be empty when (re-)joining.")
		}
		if req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil {
			return invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
		}
	case req.MemberEpoch == leaveGroupStaticMemberEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case req.MemberEpoch < leaveGroupStaticMemberEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	if req.ServerAssignor != nil {
		if _, ok := c.assignor(*req.ServerAssignor); !ok {
			return kerr.UnsupportedAssignor.Code, fmt.Sprintf("ServerAssignor %s is not supported. Supported assignors: %s.", *req.ServerAssignor, strings.Join(c.AssignorNames(), ", "))
		}
	}
	return 0, ""
}
