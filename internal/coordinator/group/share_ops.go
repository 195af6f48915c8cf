package group

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
	cr "github.com/sluice-io/sluice/internal/coordinator/group/consumerrec"
	"github.com/sluice-io/sluice/internal/kafka"
)

// A shareOp is one share group record as a change, like the consumer
// groups' cgOp: live operations and the replay of the log apply the same
// change, so a reload rebuilds the state the heartbeats built.
type shareOp interface {
	apply(sg *shareGroup, now time.Time)
	record(groupID string) Record
}

// sgDo applies op at once and queues its record for the operation's write
// (cgFlush, shared with consumer groups).
func (m *Manager) sgDo(sg *shareGroup, op shareOp) {
	op.apply(sg, m.cgNow)
	m.cgPending = append(m.cgPending, op.record(sg.id))
}

func (m *Manager) shareCfg() ShareConfig { return m.cfg.Share.withDefaults() }

func shareGroupKey(t int16, id string) *cr.ShareGroupKey {
	return &cr.ShareGroupKey{Type: t, GroupID: id}
}

func shareMemberKey(t int16, id, member string) *cr.ShareMemberKey {
	return &cr.ShareMemberKey{Type: t, GroupID: id, MemberID: member}
}

// opShareEpoch is ShareGroupMetadata: the group epoch and metadata hash.
type opShareEpoch struct {
	epoch int32
	hash  int64
}

func (o opShareEpoch) apply(sg *shareGroup, _ time.Time) {
	sg.groupEpoch, sg.metadataHash = o.epoch, o.hash
}

func (o opShareEpoch) record(id string) Record {
	return encodeRecord(shareGroupKey(cr.TypeShareGroupMetadata, id), &cr.ShareGroupMetadataValue{Epoch: o.epoch, MetadataHash: o.hash})
}

// opShareMember is ShareGroupMemberMetadata; the member's epochs,
// assignment and session are kept.
type opShareMember struct{ m *shareMember }

func (o opShareMember) apply(sg *shareGroup, _ time.Time) {
	cur, ok := sg.members[o.m.id]
	if !ok {
		// The session starts with the heartbeat (or FinishLoad).
		cur = &shareMember{id: o.m.id, assigned: assignor.Assignment{}}
	} else {
		cur = cur.clone()
	}
	cur.rackID, cur.clientID, cur.clientHost = o.m.rackID, o.m.clientID, o.m.clientHost
	cur.subscribed = slices.Clone(o.m.subscribed)
	sg.members[cur.id] = cur
}

func (o opShareMember) record(id string) Record {
	v := &cr.ShareGroupMemberMetadataValue{RackID: o.m.rackID, ClientID: o.m.clientID, ClientHost: o.m.clientHost, SubscribedTopicNames: o.m.subscribed}
	if v.SubscribedTopicNames == nil {
		v.SubscribedTopicNames = []string{}
	}
	return encodeRecord(shareMemberKey(cr.TypeShareGroupMemberMetadata, id, o.m.id), v)
}

// opShareTarget is ShareGroupTargetAssignmentMember.
type opShareTarget struct {
	memberID   string
	assignment assignor.Assignment
}

func (o opShareTarget) apply(sg *shareGroup, _ time.Time) {
	sg.target[o.memberID] = cloneAssignment(o.assignment)
}

func (o opShareTarget) record(id string) Record {
	v := &cr.ShareGroupTargetAssignmentMemberValue{TopicPartitions: []cr.TopicPartition{}}
	for _, tp := range topicPartitionsOf(o.assignment) {
		v.TopicPartitions = append(v.TopicPartitions, cr.TopicPartition{TopicID: tp.TopicID, Partitions: tp.Partitions})
	}
	return encodeRecord(shareMemberKey(cr.TypeShareGroupTargetAssignmentMember, id, o.memberID), v)
}

// opShareTargetMeta is ShareGroupTargetAssignmentMetadata.
type opShareTargetMeta struct {
	epoch     int32
	timestamp int64
}

func (o opShareTargetMeta) apply(sg *shareGroup, _ time.Time) {
	sg.assignmentEpoch, sg.assignmentTimestamp = o.epoch, o.timestamp
}

func (o opShareTargetMeta) record(id string) Record {
	return encodeRecord(shareGroupKey(cr.TypeShareGroupTargetAssignmentMetadata, id),
		&cr.ShareGroupTargetAssignmentMetadataValue{AssignmentEpoch: o.epoch, AssignmentTimestamp: o.timestamp})
}

// opShareCurrent is ShareGroupCurrentMemberAssignment: the member's
// epochs and assignment (its state is always stable, 0).
type opShareCurrent struct{ m *shareMember }

func (o opShareCurrent) apply(sg *shareGroup, _ time.Time) {
	cur, ok := sg.members[o.m.id]
	if !ok {
		cur = &shareMember{id: o.m.id}
	} else {
		cur = cur.clone()
	}
	cur.epoch, cur.prevEpoch, cur.assigned = o.m.epoch, o.m.prevEpoch, cloneAssignment(o.m.assigned)
	sg.members[cur.id] = cur
}

func (o opShareCurrent) record(id string) Record {
	v := &cr.ShareGroupCurrentMemberAssignmentValue{MemberEpoch: o.m.epoch, PreviousMemberEpoch: o.m.prevEpoch, AssignedPartitions: []cr.TopicPartition{}}
	for _, tp := range topicPartitionsOf(o.m.assigned) {
		v.AssignedPartitions = append(v.AssignedPartitions, cr.TopicPartition{TopicID: tp.TopicID, Partitions: tp.Partitions})
	}
	return encodeRecord(shareMemberKey(cr.TypeShareGroupCurrentMemberAssignment, id, o.m.id), v)
}

// opShareState is ShareGroupStatePartitionMetadata.
type opShareState struct{ s *shareStateMeta }

func (o opShareState) apply(sg *shareGroup, _ time.Time) { sg.state = o.s }

func (o opShareState) record(id string) Record {
	v := &cr.ShareGroupStatePartitionMetadataValue{
		InitializingTopics: recordInitTopics(o.s.initializing), InitializedTopics: recordInitTopics(o.s.initialized),
		DeletingTopics: []cr.ShareTopic{},
	}
	for _, tid := range slices.SortedFunc(maps.Keys(o.s.deleting), compareUUID) {
		v.DeletingTopics = append(v.DeletingTopics, cr.ShareTopic{TopicID: tid, TopicName: o.s.deleting[tid]})
	}
	return encodeRecord(shareGroupKey(cr.TypeShareGroupStatePartitionMetadata, id), v)
}

func recordInitTopics(m map[kafka.UUID]shareInitTopic) []cr.ShareTopicPartitions {
	out := []cr.ShareTopicPartitions{}
	for _, st := range stateTopics(m) {
		parts := st.Partitions
		if parts == nil {
			parts = []int32{}
		}
		out = append(out, cr.ShareTopicPartitions{TopicID: st.TopicID, TopicName: st.TopicName, Partitions: parts})
	}
	return out
}

// opShareTombstone is the tombstone of one share record: a member's
// (current assignment, target, metadata) or the group's (target metadata,
// state metadata, epoch).
type opShareTombstone struct {
	typ    int16
	member string
}

func (o opShareTombstone) apply(sg *shareGroup, _ time.Time) {
	switch o.typ {
	case cr.TypeShareGroupCurrentMemberAssignment:
		if cur, ok := sg.members[o.member]; ok {
			cur = cur.clone()
			cur.epoch, cur.prevEpoch, cur.assigned = leaveGroupMemberEpoch, leaveGroupMemberEpoch, assignor.Assignment{}
			sg.members[o.member] = cur
		}
	case cr.TypeShareGroupTargetAssignmentMember:
		delete(sg.target, o.member)
	case cr.TypeShareGroupMemberMetadata:
		delete(sg.members, o.member)
	case cr.TypeShareGroupTargetAssignmentMetadata:
		sg.assignmentEpoch, sg.assignmentTimestamp = 0, 0
	case cr.TypeShareGroupStatePartitionMetadata:
		sg.state = nil
	}
}

func (o opShareTombstone) record(id string) Record {
	if o.member != "" || o.typ == cr.TypeShareGroupMemberMetadata || o.typ == cr.TypeShareGroupTargetAssignmentMember || o.typ == cr.TypeShareGroupCurrentMemberAssignment {
		return encodeRecord(shareMemberKey(o.typ, id, o.member), nil)
	}
	return encodeRecord(shareGroupKey(o.typ, id), nil)
}

// removeShareMember writes a member's tombstones: current assignment,
// target, then metadata (Kafka's order).
func (m *Manager) removeShareMember(sg *shareGroup, id string) {
	for _, t := range []int16{cr.TypeShareGroupCurrentMemberAssignment, cr.TypeShareGroupTargetAssignmentMember, cr.TypeShareGroupMemberMetadata} {
		m.sgDo(sg, opShareTombstone{typ: t, member: id})
	}
}

// shareTombstones are the records deleting a whole share group, Kafka's
// ShareGroup.createGroupTombstoneRecords.
func shareTombstones(sg *shareGroup) []Record {
	var recs []Record
	for _, id := range sg.memberIDs() {
		for _, t := range []int16{cr.TypeShareGroupCurrentMemberAssignment, cr.TypeShareGroupTargetAssignmentMember, cr.TypeShareGroupMemberMetadata} {
			recs = append(recs, opShareTombstone{typ: t, member: id}.record(sg.id))
		}
	}
	for _, t := range []int16{cr.TypeShareGroupTargetAssignmentMetadata, cr.TypeShareGroupStatePartitionMetadata, cr.TypeShareGroupMetadata} {
		recs = append(recs, opShareTombstone{typ: t}.record(sg.id))
	}
	return recs
}

// replayShare applies a share group record read back from the log. Any
// record of a share group creates it, as Kafka's replay does; the epoch's
// tombstone removes it.
func (m *Manager) replayShare(now time.Time, key, value []byte) error {
	k, v, err := cr.DecodeShare(key, value)
	if err != nil {
		return fmt.Errorf("share group record: %w", err)
	}
	op, groupID := shareOpFromRecord(now, k, v)
	sg, ok := m.share[groupID]
	if !ok {
		if value == nil {
			return nil
		}
		if g, clash := m.groups[groupID]; clash {
			// A share group's records replace a group of another type
			// of that id only once the other's tombstones came first.
			return fmt.Errorf("share group record for %q, a %s group", groupID, g.Type())
		}
		sg = newShareGroup(groupID)
		if m.share == nil {
			m.share = make(map[string]*shareGroup)
		}
		m.share[groupID] = sg
	}
	op.apply(sg, now)
	if t, ok := op.(opShareTombstone); ok && t.typ == cr.TypeShareGroupMetadata {
		delete(m.share, groupID)
	}
	return nil
}

func shareOpFromRecord(now time.Time, k cr.Key, v cr.Value) (shareOp, string) {
	switch k := k.(type) {
	case *cr.ShareGroupKey:
		if v == nil {
			return opShareTombstone{typ: k.Type}, k.GroupID
		}
		switch val := v.(type) {
		case *cr.ShareGroupMetadataValue:
			return opShareEpoch{epoch: val.Epoch, hash: val.MetadataHash}, k.GroupID
		case *cr.ShareGroupTargetAssignmentMetadataValue:
			return opShareTargetMeta{epoch: val.AssignmentEpoch, timestamp: val.AssignmentTimestamp}, k.GroupID
		case *cr.ShareGroupStatePartitionMetadataValue:
			return opShareState{stateFromRecord(now, val)}, k.GroupID
		}
	case *cr.ShareMemberKey:
		if v == nil {
			return opShareTombstone{typ: k.Type, member: k.MemberID}, k.GroupID
		}
		switch val := v.(type) {
		case *cr.ShareGroupMemberMetadataValue:
			subs := slices.Compact(slices.Sorted(slices.Values(val.SubscribedTopicNames)))
			return opShareMember{&shareMember{id: k.MemberID, rackID: val.RackID, clientID: val.ClientID, clientHost: val.ClientHost, subscribed: subs}}, k.GroupID
		case *cr.ShareGroupTargetAssignmentMemberValue:
			return opShareTarget{memberID: k.MemberID, assignment: assignmentFromRecord(val.TopicPartitions)}, k.GroupID
		case *cr.ShareGroupCurrentMemberAssignmentValue:
			return opShareCurrent{&shareMember{id: k.MemberID, epoch: val.MemberEpoch, prevEpoch: val.PreviousMemberEpoch, assigned: assignmentFromRecord(val.AssignedPartitions)}}, k.GroupID
		}
	}
	panic(fmt.Sprintf("share record %T with value %T", k, v)) // DecodeShare pairs them
}

func assignmentFromRecord(tps []cr.TopicPartition) assignor.Assignment {
	a := assignor.Assignment{}
	for _, tp := range tps {
		if len(tp.Partitions) > 0 {
			a[tp.TopicID] = unionPartitions(a[tp.TopicID], tp.Partitions)
		}
	}
	return a
}

func stateFromRecord(now time.Time, v *cr.ShareGroupStatePartitionMetadataValue) *shareStateMeta {
	s := (*shareStateMeta)(nil).clone()
	for _, t := range v.InitializingTopics {
		s.initializing[t.TopicID] = shareInitTopic{name: t.TopicName, partitions: unionPartitions(nil, t.Partitions), since: now}
	}
	for _, t := range v.InitializedTopics {
		s.initialized[t.TopicID] = shareInitTopic{name: t.TopicName, partitions: unionPartitions(nil, t.Partitions), since: now}
	}
	for _, t := range v.DeletingTopics {
		s.deleting[t.TopicID] = t.TopicName
	}
	return s
}
