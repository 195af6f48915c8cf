package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Group is one classic group: its membership, generation and offsets.
type Group struct {
	mgr *Manager
	id  string

	state      State
	stateSince time.Time
	// protocolType is the members' common protocol type ("consumer" for
	// consumers; empty for a group that only commits offsets).
	protocolType string
	protocolName string
	generation   int32
	leader       string
	members      map[string]*member
	// order keeps members in join order, so the leader choice and the
	// member lists are deterministic.
	order []string
	// static maps group.instance.id to the current member id.
	static map[string]string
	// pending are member ids handed out with MEMBER_ID_REQUIRED that have not
	// joined yet, with the time they expire.
	pending map[string]time.Time
	// pendingSync are members of the current generation that have not synced.
	pendingSync map[string]bool

	// joinDeadline ends the join phase of a rebalance; zero when none.
	joinDeadline time.Time
	// initialRebalance is set while a rebalance that started from Empty waits
	// for group.initial.rebalance.delay.ms; initialRemaining is what is left of
	// the rebalance timeout to extend it by.
	initialRebalance bool
	initialRemaining time.Duration
	newMemberAdded   bool
	// syncDeadline ends the wait for members to sync; zero when none.
	syncDeadline time.Time

	offsets map[kafka.TopicPartition]OffsetAndMetadata

	// cg is set when the group is a consumer group (KIP-848): its
	// membership lives there and the classic fields above stay empty.
	cg *consumerGroup
}

// Type is the group's type as ListGroups and DescribeGroups report it:
// "consumer" for a KIP-848 consumer group, "classic" otherwise.
func (g *Group) Type() string {
	if g.cg != nil {
		return "consumer"
	}
	return "classic"
}

func newGroup(mgr *Manager, id string, now time.Time) *Group {
	return &Group{
		mgr: mgr, id: id, state: Empty, stateSince: now,
		members: make(map[string]*member), static: make(map[string]string),
		pending: make(map[string]time.Time), pendingSync: make(map[string]bool),
		offsets: make(map[kafka.TopicPartition]OffsetAndMetadata),
	}
}

// ID returns the group id.
func (g *Group) ID() string { return g.id }

// State returns the group's state.
func (g *Group) State() State { return g.state }

// Generation returns the current generation id.
func (g *Group) Generation() int32 { return g.generation }

func (g *Group) transition(s State, now time.Time) {
	g.state = s
	g.stateSince = now
}

func (g *Group) addMember(m *member, now time.Time) {
	if g.leader == "" {
		g.leader = m.id
	}
	g.members[m.id] = m
	g.order = append(g.order, m.id)
	if m.instanceID != nil {
		g.static[*m.instanceID] = m.id
	}
	if g.state == PreparingRebalance {
		g.newMemberAdded = true
	}
	m.lastHeartbeat = now
}

// removeMember drops a member, answering whatever it waits in with
// UNKNOWN_MEMBER_ID, and picks a new leader if it was the leader.
func (g *Group) removeMember(id string) {
	m, ok := g.members[id]
	if !ok {
		return
	}
	if m.joinReply != nil {
		reply := m.joinReply
		m.joinReply = nil
		reply(JoinResult{ErrorCode: kerr.UnknownMemberID.Code, MemberID: id, GenerationID: -1})
	}
	if m.syncReply != nil {
		reply := m.syncReply
		m.syncReply = nil
		reply(SyncResult{ErrorCode: kerr.UnknownMemberID.Code})
	}
	delete(g.members, id)
	delete(g.pendingSync, id)
	g.order = slices.DeleteFunc(g.order, func(s string) bool { return s == id })
	if m.instanceID != nil && g.static[*m.instanceID] == id {
		delete(g.static, *m.instanceID)
	}
	if g.leader == id {
		g.leader = ""
		if len(g.order) > 0 {
			g.leader = g.order[0]
		}
	}
}

// rebalanceTimeout is the longest rebalance timeout of the members.
func (g *Group) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// supportsProtocols reports whether a joining member's protocols fit the
// group: a protocol type and at least one protocol, the group's type, and at
// least one protocol every member supports.
func (g *Group) supportsProtocols(protocolType string, ps []Protocol) bool {
	if protocolType == "" || len(ps) == 0 {
		return false
	}
	if len(g.members) == 0 {
		return true
	}
	if protocolType != g.protocolType {
		return false
	}
	for _, p := range ps {
		if g.allSupport(p.Name) {
			return true
		}
	}
	return false
}

func (g *Group) allSupport(name string) bool {
	for _, m := range g.members {
		if !m.supports(name) {
			return false
		}
	}
	return true
}

// selectProtocol is Kafka's vote: among the protocols every member
// supports, each member votes for its most preferred; most votes win, ties
// going to the candidate the earliest member prefers.
func (g *Group) selectProtocol() string {
	var candidates []string
	if len(g.order) == 0 {
		return ""
	}
	for _, p := range g.members[g.order[0]].protocols {
		if g.allSupport(p.Name) {
			candidates = append(candidates, p.Name)
		}
	}
	votes := make(map[string]int)
	for _, id := range g.order {
		for _, p := range g.members[id].protocols {
			if slices.Contains(candidates, p.Name) {
				votes[p.Name]++
				break
			}
		}
	}
	best := ""
	for _, c := range candidates {
		if best == "" || votes[c] > votes[best] {
			best = c
		}
	}
	return best
}

// hasAllMembersJoined reports whether the join phase can end early.
func (g *Group) hasAllMembersJoined() bool {
	if len(g.pending) > 0 {
		return false
	}
	for _, m := range g.members {
		if !m.awaitingJoin() {
			return false
		}
	}
	return true
}

// prepareRebalance starts a rebalance: members must rejoin within the
// rebalance timeout; a group starting from Empty first waits for the initial
// delay so that several members can join at once.
func (g *Group) prepareRebalance(now time.Time) {
	if g.state == CompletingRebalance {
		g.failPendingSyncs(kerr.RebalanceInProgress.Code)
	}
	g.syncDeadline = time.Time{}
	timeout := g.rebalanceTimeout()
	if g.state == Empty {
		delay := g.mgr.cfg.InitialRebalanceDelay
		g.initialRebalance = true
		g.initialRemaining = max(timeout-delay, 0)
		g.newMemberAdded = false
		g.joinDeadline = now.Add(delay)
	} else {
		g.initialRebalance = false
		g.joinDeadline = now.Add(timeout)
	}
	g.transition(PreparingRebalance, now)
}

func (g *Group) failPendingSyncs(code int16) {
	for _, id := range g.order {
		m := g.members[id]
		if m.syncReply != nil {
			reply := m.syncReply
			m.syncReply = nil
			reply(SyncResult{ErrorCode: code})
		}
	}
}

// maybeCompleteJoin ends the join phase early once everyone has joined,
// except for an initial rebalance, which always waits its delay.
func (g *Group) maybeCompleteJoin(now time.Time) {
	if g.state == PreparingRebalance && !g.initialRebalance && g.hasAllMembersJoined() {
		g.completeJoin(now)
	}
}

// completeJoin ends the join phase: members that did not rejoin are removed,
// the generation advances and every joined member gets its answer.
func (g *Group) completeJoin(now time.Time) {
	if g.state != PreparingRebalance {
		return
	}
	g.joinDeadline = time.Time{}
	g.initialRebalance = false
	for _, id := range slices.Clone(g.order) {
		if !g.members[id].awaitingJoin() {
			g.removeMember(id)
		}
	}
	g.generation++
	if len(g.members) == 0 {
		g.protocolName = ""
		g.transition(Empty, now)
		g.mgr.emit([]Record{g.metadataRecord(now)}, nil)
		return
	}
	g.protocolName = g.selectProtocol()
	g.transition(CompletingRebalance, now)
	g.pendingSync = make(map[string]bool, len(g.members))
	for _, id := range g.order {
		m := g.members[id]
		res := g.joinResult(m, false)
		reply := m.joinReply
		m.joinReply = nil
		m.isNew = false
		m.lastHeartbeat = now
		g.pendingSync[id] = true
		reply(res)
	}
	g.syncDeadline = now.Add(g.rebalanceTimeout())
}

// joinResult is the current generation's JoinGroup answer for m; the leader
// gets the member list.
func (g *Group) joinResult(m *member, skipAssignment bool) JoinResult {
	res := JoinResult{
		GenerationID: g.generation,
		ProtocolType: strPtr(g.protocolType),
		ProtocolName: strPtr(g.protocolName),
		LeaderID:     g.leader,
		MemberID:     m.id,
		// SkipAssignment is only ever sent to the leader.
		SkipAssignment: skipAssignment,
	}
	if m.id == g.leader {
		for _, id := range g.order {
			o := g.members[id]
			res.Members = append(res.Members, JoinMember{MemberID: o.id, InstanceID: o.instanceID, Metadata: o.metadataFor(g.protocolName)})
		}
	}
	return res
}

// removeMemberAndUpdate drops a member (expiry or leave) and moves the group
// on: a rebalance, or the end of a join phase that waited only for it.
func (g *Group) removeMemberAndUpdate(id string, now time.Time) {
	g.removeMember(id)
	g.afterRemoval(now)
}

// afterRemoval moves the group on once members are gone: a stable or
// completing group rebalances (ending at once if nobody is left), a
// preparing one may now have everyone it waits for.
func (g *Group) afterRemoval(now time.Time) {
	switch g.state {
	case Stable, CompletingRebalance:
		g.prepareRebalance(now)
		g.maybeCompleteJoin(now)
	case PreparingRebalance:
		g.maybeCompleteJoin(now)
	}
}

// tick fires the group's expired timers.
func (g *Group) tick(now time.Time) {
	if g.cg != nil {
		g.mgr.cgNow = now
		g.mgr.tickConsumer(now, g)
		return
	}
	for id, expiry := range g.pending {
		if !now.Before(expiry) {
			delete(g.pending, id)
			g.maybeCompleteJoin(now)
		}
	}
	if !g.joinDeadline.IsZero() && !now.Before(g.joinDeadline) && g.state == PreparingRebalance {
		if g.initialRebalance && g.newMemberAdded && g.initialRemaining > 0 {
			delay := min(g.mgr.cfg.InitialRebalanceDelay, g.initialRemaining)
			g.initialRemaining = max(g.initialRemaining-g.mgr.cfg.InitialRebalanceDelay, 0)
			g.newMemberAdded = false
			g.joinDeadline = now.Add(delay)
		} else {
			g.completeJoin(now)
		}
	}
	if !g.syncDeadline.IsZero() && !now.Before(g.syncDeadline) && (g.state == CompletingRebalance || g.state == Stable) {
		g.syncDeadline = time.Time{}
		if len(g.pendingSync) > 0 {
			for _, id := range slices.Clone(g.order) {
				if g.pendingSync[id] {
					g.removeMember(id)
				}
			}
			g.prepareRebalance(now)
			g.maybeCompleteJoin(now)
		}
	}
	if g.state == Dead || g.state == Empty {
		return
	}
	for _, id := range slices.Clone(g.order) {
		m, ok := g.members[id]
		if !ok || g.keepAlive(m, now) || now.Before(m.deadline()) {
			continue
		}
		g.removeMemberAndUpdate(id, now)
	}
}

// keepAlive reports whether a member's session is suspended: members waiting
// in JoinGroup or SyncGroup are not expired, except a new member whose
// rebalance takes longer than NewMemberJoinTimeout.
func (g *Group) keepAlive(m *member, now time.Time) bool {
	if m.awaitingJoin() {
		return !m.isNew || now.Before(m.joinedAt.Add(g.mgr.cfg.NewMemberJoinTimeout))
	}
	return m.awaitingSync()
}

// nextDeadline is the earliest timer of the group, or zero.
func (g *Group) nextDeadline() time.Time {
	if g.cg != nil {
		return g.cg.nextDeadline()
	}
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, t := range g.pending {
		consider(t)
	}
	consider(g.joinDeadline)
	consider(g.syncDeadline)
	if g.state != Empty && g.state != Dead {
		for _, m := range g.members {
			if m.awaitingJoin() && m.isNew {
				consider(m.joinedAt.Add(g.mgr.cfg.NewMemberJoinTimeout))
			} else if !m.awaitingJoin() && !m.awaitingSync() {
				consider(m.deadline())
			}
		}
	}
	return next
}
