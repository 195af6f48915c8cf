package group

import (
	"hash/fnv"
	"maps"
	"slices"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
	"github.com/sluice-io/sluice/internal/kafka"
)

// Consumer group states, with Kafka's names.
const (
	cgEmpty       = "Empty"
	cgAssigning   = "Assigning"
	cgReconciling = "Reconciling"
	cgStable      = "Stable"
)

// consumerGroup is the KIP-848 membership of a Group: members heartbeat,
// the coordinator computes a target assignment per group epoch, and each
// member converges to it through its current assignment.
type consumerGroup struct {
	groupEpoch int32
	// assignmentEpoch is the group epoch the target assignment was computed
	// for. Invariant: assignmentEpoch <= groupEpoch.
	assignmentEpoch     int32
	assignmentTimestamp int64
	metadataHash        int64
	members             map[string]*consumerMember
	// static maps group.instance.id to member id.
	static map[string]string
	// target is every member's target assignment.
	target map[string]assignor.Assignment
	// owners maps a partition to the epoch of the member that holds it
	// (assigned or pending revocation): a partition is given to its new
	// owner only once the old one has released it.
	owners map[kafka.UUID]map[int32]int32
	// regexes are the resolved regular expressions, by expression.
	regexes map[string]resolvedRegex
	// topicsVersion is the Topics version the metadata hash and regexes
	// were last computed at.
	topicsVersion int64
}

// resolvedRegex is a regular expression and the topics it matched.
type resolvedRegex struct {
	topics    []string // sorted
	version   int64
	timestamp int64
}

// newConsumerGroup is a group before its first record: group and
// assignment epochs 1, as Kafka 4.4's, so its first bump gives epoch 2.
func newConsumerGroup() *consumerGroup {
	return &consumerGroup{
		groupEpoch: 1, assignmentEpoch: 1,
		members: make(map[string]*consumerMember), static: make(map[string]string),
		target: make(map[string]assignor.Assignment), owners: make(map[kafka.UUID]map[int32]int32),
		regexes: make(map[string]resolvedRegex), topicsVersion: -1,
	}
}

// state is the group's state, derived as Kafka derives it.
func (cg *consumerGroup) state() string {
	switch {
	case len(cg.members) == 0:
		return cgEmpty
	case cg.groupEpoch > cg.assignmentEpoch:
		return cgAssigning
	}
	for _, m := range cg.members {
		if !m.isReconciledTo(cg.assignmentEpoch) {
			return cgReconciling
		}
	}
	return cgStable
}

// memberIDs returns the member ids, sorted.
func (cg *consumerGroup) memberIDs() []string { return slices.Sorted(maps.Keys(cg.members)) }

// putMember adds or replaces a member, keeping the owners and the static
// index in step.
func (cg *consumerGroup) putMember(m *consumerMember) {
	if old, ok := cg.members[m.id]; ok && old != m {
		cg.releaseOwnership(old)
	}
	cg.members[m.id] = m
	if m.instanceID != nil {
		cg.static[*m.instanceID] = m.id
	}
	cg.takeOwnership(m)
}

// removeMember drops a member and its target assignment.
func (cg *consumerGroup) removeMember(id string) {
	m, ok := cg.members[id]
	if !ok {
		return
	}
	cg.releaseOwnership(m)
	delete(cg.members, id)
	delete(cg.target, id)
	if m.instanceID != nil && cg.static[*m.instanceID] == id {
		delete(cg.static, *m.instanceID)
	}
}

func (cg *consumerGroup) takeOwnership(m *consumerMember) {
	for _, p := range []partitionEpochs{m.assigned, m.pendingRevocation} {
		for id, parts := range p {
			o := cg.owners[id]
			if o == nil {
				o = make(map[int32]int32)
				cg.owners[id] = o
			}
			for part := range parts {
				o[part] = m.epoch
			}
		}
	}
}

func (cg *consumerGroup) releaseOwnership(m *consumerMember) {
	for _, p := range []partitionEpochs{m.assigned, m.pendingRevocation} {
		for id, parts := range p {
			for part := range parts {
				delete(cg.owners[id], part)
			}
			if len(cg.owners[id]) == 0 {
				delete(cg.owners, id)
			}
		}
	}
}

// ownerEpoch is the epoch of the member holding a partition, or -1.
func (cg *consumerGroup) ownerEpoch(id kafka.UUID, partition int32) int32 {
	if e, ok := cg.owners[id][partition]; ok {
		return e
	}
	return -1
}

// subscribedTopicNames is every topic some member subscribes to, by name
// or through a resolved regex.
func (cg *consumerGroup) subscribedTopicNames() map[string]bool {
	out := make(map[string]bool)
	for _, m := range cg.members {
		for _, t := range m.subscribedNames {
			out[t] = true
		}
		if m.regex != "" {
			for _, t := range cg.regexes[m.regex].topics {
				out[t] = true
			}
		}
	}
	return out
}

// regexCount is how many members subscribe with regex.
func (cg *consumerGroup) regexCount(regex string) int {
	n := 0
	for _, m := range cg.members {
		if m.regex == regex {
			n++
		}
	}
	return n
}

// metadataHashOf hashes the (id, name, partition count) of the subscribed
// topics that exist: a change means the target assignment is stale.
func metadataHashOf(names map[string]bool, topics Topics) int64 {
	if len(names) == 0 {
		return 0
	}
	h := fnv.New64a()
	var buf [4]byte
	for _, name := range slices.Sorted(maps.Keys(names)) {
		t, ok := topics.ByName(name)
		if !ok {
			continue
		}
		h.Write(t.ID[:])
		h.Write([]byte(name))
		buf[0], buf[1], buf[2], buf[3] = byte(t.Partitions>>24), byte(t.Partitions>>16), byte(t.Partitions>>8), byte(t.Partitions)
		h.Write(buf[:])
	}
	return int64(h.Sum64())
}

// preferredAssignor is the server assignor most members ask for (ties to
// the first name in order), or def.
func (cg *consumerGroup) preferredAssignor(old, updated *consumerMember, def string) string {
	counts := make(map[string]int)
	for id, m := range cg.members {
		if old != nil && id == old.id {
			continue
		}
		if m.serverAssignor != nil {
			counts[*m.serverAssignor]++
		}
	}
	if updated != nil && updated.serverAssignor != nil {
		counts[*updated.serverAssignor]++
	}
	best, n := def, 0
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		if counts[name] > n {
			best, n = name, counts[name]
		}
	}
	return best
}

// subscribedTopicIDs is the ids of the existing topics m subscribes to.
func (cg *consumerGroup) subscribedTopicIDs(m *consumerMember, topics Topics) map[kafka.UUID]bool {
	out := make(map[kafka.UUID]bool)
	add := func(name string) {
		if t, ok := topics.ByName(name); ok {
			out[t.ID] = true
		}
	}
	for _, name := range m.subscribedNames {
		add(name)
	}
	if m.regex != "" {
		for _, name := range cg.regexes[m.regex].topics {
			add(name)
		}
	}
	return out
}

// computeTarget runs the assignor over every member (updated replacing
// its old self) and returns the new target assignments.
func (cg *consumerGroup) computeTarget(a assignor.Assignor, updated *consumerMember, topics Topics) (map[string]assignor.Assignment, error) {
	members := maps.Clone(cg.members)
	if updated != nil {
		members[updated.id] = updated
	}
	spec := assignor.Spec{Topics: make(map[kafka.UUID]assignor.Topic)}
	for _, id := range slices.Sorted(maps.Keys(members)) {
		m := members[id]
		subs := cg.subscribedTopicIDs(m, topics)
		am := assignor.Member{ID: id, Subscribed: slices.SortedFunc(maps.Keys(subs), compareUUID), Current: cg.target[id]}
		if m.instanceID != nil {
			am.InstanceID = *m.instanceID
		}
		if m.rackID != nil {
			am.RackID = *m.rackID
		}
		for tid := range subs {
			if t, ok := topics.ByID(tid); ok {
				spec.Topics[tid] = assignor.Topic{ID: tid, Name: t.Name, Partitions: t.Partitions}
			}
		}
		spec.Members = append(spec.Members, am)
	}
	return a.Assign(spec)
}

// sessionTimeout is the member's session timeout: the group's for a
// consumer-protocol member, its own for a classic one.
func (cg *consumerGroup) sessionTimeout(m *consumerMember, def time.Duration) time.Duration {
	if m.classic != nil {
		return time.Duration(m.classic.sessionTimeoutMs) * time.Millisecond
	}
	return def
}

func equalAssignment(a, b assignor.Assignment) bool {
	return maps.EqualFunc(a, b, func(x, y []int32) bool { return slices.Equal(x, y) })
}

// startTimers gives loaded members a fresh session, and those still
// revoking their rebalance timeout, as Kafka does on load.
func (cg *consumerGroup) startTimers(now time.Time, session time.Duration) {
	for _, m := range cg.members {
		m.sessionDeadline = now.Add(cg.sessionTimeout(m, session))
		m.rebalanceDeadline = time.Time{}
		if m.state == memberUnrevokedPartitions && m.classic == nil {
			m.rebalanceDeadline = now.Add(time.Duration(m.rebalanceTimeoutMs) * time.Millisecond)
			m.rebalanceEpoch = m.epoch
		}
	}
}
