package group

// ShareGroupDescribe, ListGroups and DeleteGroups of share groups.

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
	"github.com/sluice-io/sluice/internal/kafka"
)

// DescribeShareGroup returns a group's ShareGroupDescribe answer: an
// unknown group, or one of another type, is GROUP_ID_NOT_FOUND with
// Kafka's message.
func (m *Manager) DescribeShareGroup(id string) ShareGroupDescription {
	sg, ok := m.share[id]
	if !ok {
		msg := "Group " + id + " not found."
		if g, other := m.groups[id]; other && g.state != Dead {
			msg = "Group " + id + " is not a share group."
		}
		return ShareGroupDescription{GroupID: id, ErrorCode: kerr.GroupIDNotFound.Code, ErrorMessage: &msg}
	}
	topics := m.topics()
	d := ShareGroupDescription{
		GroupID: id, State: sg.stateName(), GroupEpoch: sg.groupEpoch, AssignmentEpoch: sg.assignmentEpoch,
		AssignorName: assignor.SimpleName, Members: []ShareMemberDescription{},
	}
	for _, mid := range sg.memberIDs() {
		mem := sg.members[mid]
		d.Members = append(d.Members, ShareMemberDescription{
			MemberID: mem.id, RackID: mem.rackID, MemberEpoch: mem.epoch, ClientID: mem.clientID, ClientHost: mem.clientHost,
			SubscribedTopicNames: slices.Clone(mem.subscribed), Assignment: describedAssignment(mem.assigned, topics),
		})
	}
	return d
}

// describedAssignment names an assignment's topics; a topic the image no
// longer has keeps an empty name, as Kafka's.
func describedAssignment(a assignor.Assignment, topics Topics) []DescribedPartitions {
	out := []DescribedPartitions{}
	for _, tp := range topicPartitionsOf(a) {
		d := DescribedPartitions{TopicID: tp.TopicID, Partitions: tp.Partitions}
		if t, ok := topics.ByID(tp.TopicID); ok {
			d.TopicName = t.Name
		}
		out = append(out, d)
	}
	return out
}

// shareListings are the share groups as ListGroups shows them.
func (m *Manager) shareListings() []Listing {
	out := make([]Listing, 0, len(m.share))
	for _, id := range sortedShareIDs(m.share) {
		out = append(out, Listing{GroupID: id, ProtocolType: "share", State: m.share[id].stateName(), Type: "share"})
	}
	return out
}

// IsShareGroup reports whether id is a share group on this partition.
func (m *Manager) IsShareGroup(id string) bool {
	_, ok := m.share[id]
	return ok
}

// PrepareShareDelete is DeleteGroups' first step for a share group, as
// Kafka's sharePartitionDeleteRequests: a group with members is
// NON_EMPTY_GROUP; otherwise the partitions with share state move to the
// deleting topics (written), and reply gets the request the share
// persister must delete, nil when there is none. Once the persister is
// done the caller deletes the group with Delete.
func (m *Manager) PrepareShareDelete(now time.Time, id string, reply func(*ShareStateRequest, int16)) {
	m.cgNow = now
	sg, ok := m.share[id]
	switch {
	case !ok:
		reply(nil, kerr.GroupIDNotFound.Code)
		return
	case len(sg.members) > 0:
		reply(nil, kerr.NonEmptyGroup.Code)
		return
	}
	req, next := sg.state.deleteRequest(id, sg.groupEpoch, m.topics())
	if next == nil {
		reply(nil, 0)
		return
	}
	m.sgDo(sg, opShareState{next})
	m.cgFlush(func(err error) {
		if err != nil {
			reply(nil, writeErrorCode(err))
			return
		}
		reply(req, 0)
	})
}

// deleteRequest is the partitions to delete from the share coordinator:
// initialized and initializing ones, and every partition of topics a
// previous delete left deleting; next has them all as deleting (nil when
// there is nothing).
func (s *shareStateMeta) deleteRequest(groupID string, epoch int32, topics Topics) (*ShareStateRequest, *shareStateMeta) {
	if s == nil {
		return nil, nil
	}
	all := map[kafka.UUID]shareInitTopic{}
	for _, src := range []map[kafka.UUID]shareInitTopic{s.initialized, s.initializing} {
		for id, it := range src {
			cur := all[id]
			all[id] = shareInitTopic{name: it.name, partitions: unionPartitions(cur.partitions, it.partitions)}
		}
	}
	for id, name := range s.deleting {
		if _, ok := all[id]; ok {
			continue
		}
		if t, ok := topics.ByID(id); ok {
			var parts []int32
			for p := range t.Partitions {
				parts = append(parts, p)
			}
			all[id] = shareInitTopic{name: name, partitions: parts}
		}
	}
	if len(all) == 0 {
		return nil, nil
	}
	next := (*shareStateMeta)(nil).clone()
	for id, it := range all {
		next.deleting[id] = it.name
	}
	return &ShareStateRequest{GroupID: groupID, GroupEpoch: epoch, Topics: stateTopics(all)}, next
}

// deleteShare removes an empty share group with its tombstones (Delete's
// share branch); reply gets the code once they are durable.
func (m *Manager) deleteShare(id string, reply func(int16)) {
	sg := m.share[id]
	if len(sg.members) > 0 {
		reply(kerr.NonEmptyGroup.Code)
		return
	}
	delete(m.share, id)
	m.emit(shareTombstones(sg), func(err error) {
		if err != nil {
			reply(WriteErrorCode(err))
			return
		}
		reply(0)
	})
}
