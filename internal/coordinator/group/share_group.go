package group

import (
	"maps"
	"slices"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
	"github.com/sluice-io/sluice/internal/kafka"
)

// Share group states, with Kafka's names: a share group has no
// reconciliation phases, members take their assignment whole.
const (
	sgEmpty  = "Empty"
	sgStable = "Stable"
)

// shareGroup is a KIP-932 share group: members heartbeat, the
// coordinator computes a target assignment per group epoch with the simple
// assignor, and each member gets its target whole at that epoch. Share
// groups live in Manager.share, apart from classic and consumer groups but
// in the same id space.
type shareGroup struct {
	id         string
	groupEpoch int32
	// assignmentEpoch is the group epoch the target was computed for.
	// Invariant: assignmentEpoch <= groupEpoch.
	assignmentEpoch     int32
	assignmentTimestamp int64
	metadataHash        int64
	members             map[string]*shareMember
	target              map[string]assignor.Assignment
	// state is ShareGroupStatePartitionMetadata: the partitions whose share
	// state the share coordinator holds; nil before the first record.
	state *shareStateMeta
	// topicsVersion is the Topics version the metadata hash was computed
	// at (Kafka's metadata refresh).
	topicsVersion int64
}

// shareMember is one member of a share group.
type shareMember struct {
	id string
	// epoch is the member epoch; prevEpoch the one before (a member whose
	// answer was lost retries with it).
	epoch, prevEpoch     int32
	rackID               *string
	clientID, clientHost string
	subscribed           []string // sorted
	assigned             assignor.Assignment
	// sessionDeadline fences the member when it stops heartbeating; not
	// persisted, set afresh on load.
	sessionDeadline time.Time
}

// newShareGroup is a group before its first record: epochs 1, as Kafka
// 4.4's ModernGroup, so the first member's join gives epoch 2.
func newShareGroup(id string) *shareGroup {
	return &shareGroup{id: id, groupEpoch: 1, assignmentEpoch: 1,
		members: make(map[string]*shareMember), target: make(map[string]assignor.Assignment), topicsVersion: -1}
}

func (sg *shareGroup) stateName() string {
	if len(sg.members) == 0 {
		return sgEmpty
	}
	return sgStable
}

func (sg *shareGroup) memberIDs() []string { return slices.Sorted(maps.Keys(sg.members)) }

func (m *shareMember) clone() *shareMember {
	c := *m
	c.subscribed = slices.Clone(m.subscribed)
	c.assigned = cloneAssignment(m.assigned)
	return &c
}

func cloneAssignment(a assignor.Assignment) assignor.Assignment {
	out := make(assignor.Assignment, len(a))
	for t, p := range a {
		out[t] = slices.Clone(p)
	}
	return out
}

// sameMetadata reports whether the persisted member metadata is equal.
func (m *shareMember) sameMetadata(o *shareMember) bool {
	return eqStrPtr(m.rackID, o.rackID) && m.clientID == o.clientID && m.clientHost == o.clientHost &&
		slices.Equal(m.subscribed, o.subscribed)
}

// subscribedNames is every topic name some member subscribes to, with
// updated (when not nil) in place of its old self and gone left out.
func (sg *shareGroup) subscribedNames(updated *shareMember, gone string) map[string]bool {
	out := make(map[string]bool)
	for id, m := range sg.members {
		if id == gone || (updated != nil && id == updated.id) {
			continue
		}
		for _, t := range m.subscribed {
			out[t] = true
		}
	}
	if updated != nil {
		for _, t := range updated.subscribed {
			out[t] = true
		}
	}
	return out
}

// topicPartitionsOf lists an assignment sorted by topic id.
func topicPartitionsOf(a assignor.Assignment) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(a))
	for _, id := range slices.SortedFunc(maps.Keys(a), compareUUID) {
		out = append(out, TopicPartitions{TopicID: id, Partitions: slices.Clone(a[id])})
	}
	return out
}

// nextDeadline is the earliest session deadline, or zero.
func (sg *shareGroup) nextDeadline() time.Time {
	var next time.Time
	for _, m := range sg.members {
		if t := m.sessionDeadline; !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// computeTarget runs the simple assignor over the members (updated in
// place of its old self) with the initialized partitions of the existing
// subscribed topics as the assignable ones.
func (sg *shareGroup) computeTarget(updated *shareMember, topics Topics) (map[string]assignor.Assignment, error) {
	members := maps.Clone(sg.members)
	if updated != nil {
		members[updated.id] = updated
	}
	spec := assignor.ShareSpec{Assignable: make(map[kafka.UUID][]int32)}
	for _, id := range slices.Sorted(maps.Keys(members)) {
		m := members[id]
		am := assignor.ShareMember{ID: id, Current: sg.target[id]}
		for _, name := range m.subscribed {
			t, ok := topics.ByName(name)
			if !ok {
				continue
			}
			am.Subscribed = append(am.Subscribed, t.ID)
			spec.Assignable[t.ID] = sg.state.initializedBelow(t.ID, t.Partitions)
		}
		slices.SortFunc(am.Subscribed, compareUUID)
		spec.Members = append(spec.Members, am)
	}
	return assignor.AssignShare(spec)
}
