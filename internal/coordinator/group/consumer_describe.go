package group

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
)

// DescribeConsumerGroup returns a group's ConsumerGroupDescribe answer; a
// group that does not exist or is classic is GROUP_ID_NOT_FOUND, Kafka's
// answer.
func (m *Manager) DescribeConsumerGroup(id string) ConsumerGroupDescription {
	g, ok := m.groups[id]
	if m.IsShareGroup(id) {
		msg := "Group " + id + " is not a consumer group."
		return ConsumerGroupDescription{GroupID: id, ErrorCode: kerr.GroupIDNotFound.Code, ErrorMessage: &msg}
	}
	if !ok || g.state == Dead && g.cg == nil {
		msg := "Group " + id + " not found."
		return ConsumerGroupDescription{GroupID: id, ErrorCode: kerr.GroupIDNotFound.Code, ErrorMessage: &msg}
	}
	if g.cg == nil {
		msg := "Group " + id + " is not a consumer group."
		return ConsumerGroupDescription{GroupID: id, ErrorCode: kerr.GroupIDNotFound.Code, ErrorMessage: &msg}
	}
	cg, topics := g.cg, m.topics()
	d := ConsumerGroupDescription{
		GroupID: id, State: cg.state(), GroupEpoch: cg.groupEpoch, AssignmentEpoch: cg.assignmentEpoch,
		AssignorName: cg.preferredAssignor(nil, nil, m.cfg.defaultAssignor().Name()),
	}
	for _, mid := range cg.memberIDs() {
		mem := cg.members[mid]
		md := ConsumerMemberDescription{
			MemberID: mem.id, InstanceID: mem.instanceID, RackID: mem.rackID, MemberEpoch: mem.epoch,
			ClientID: mem.clientID, ClientHost: mem.clientHost, SubscribedTopicNames: slices.Clone(mem.subscribedNames),
			Assignment:       describePartitions(mem.assigned.topicPartitions(), topics),
			TargetAssignment: describePartitions(assignmentPartitions(cg.target[mid]), topics),
			Classic:          mem.usesClassic(),
		}
		if md.SubscribedTopicNames == nil {
			md.SubscribedTopicNames = []string{}
		}
		if mem.regex != "" {
			md.SubscribedTopicRegex = &mem.regex
		}
		d.Members = append(d.Members, md)
	}
	return d
}

func assignmentPartitions(a assignor.Assignment) []TopicPartitions {
	out := make([]TopicPartitions, 0, len(a))
	for _, id := range slices.SortedFunc(maps.Keys(a), compareUUID) {
		out = append(out, TopicPartitions{TopicID: id, Partitions: slices.Clone(a[id])})
	}
	return out
}

// describePartitions names the topics; a deleted topic's partitions are
// left out, as Kafka's describe does.
func describePartitions(tps []TopicPartitions, topics Topics) []DescribedPartitions {
	out := []DescribedPartitions{}
	for _, tp := range tps {
		t, ok := topics.ByID(tp.TopicID)
		if !ok {
			continue
		}
		out = append(out, DescribedPartitions{TopicID: tp.TopicID, TopicName: t.Name, Partitions: tp.Partitions})
	}
	return out
}

// tombstones are the records that delete a consumer group: every member's
// current assignment, target and metadata, the target's metadata, the
// regexes, the (old) partition metadata and the group epoch, Kafka's order.
func (cg *consumerGroup) tombstones(id string) []Record {
	var ops []cgOp
	ids := cg.memberIDs()
	for _, mid := range ids {
		ops = append(ops, opCurrentTombstone{mid})
	}
	for _, mid := range ids {
		ops = append(ops, opTargetTombstone{mid})
	}
	ops = append(ops, opTargetMetaTombstone{})
	for _, mid := range ids {
		ops = append(ops, opMemberTombstone{mid})
	}
	for _, re := range slices.Sorted(maps.Keys(cg.regexes)) {
		ops = append(ops, opRegexTombstone{re})
	}
	ops = append(ops, opPartitionMetaTombstone{}, opGroupTombstone{})
	recs := make([]Record, len(ops))
	for i, op := range ops {
		recs[i] = op.record(id)
	}
	return recs
}

// validateConsumerCommit is Kafka's ConsumerGroup.validateOffsetCommit: a
// member commits with its current epoch, or an older one for partitions it
// held since then (KIP-1251); the whole commit fails otherwise. version is
// the OffsetCommit (or TxnOffsetCommit) version.
func (g *Group) validateConsumerCommit(memberID string, instanceID *string, epoch int32, transactional bool, version int16, parts []CommitPartition, topics Topics) int16 {
	cg := g.cg
	if epoch < 0 && len(cg.members) == 0 {
		return 0
	}
	if transactional && epoch == -1 && memberID == "" && instanceID == nil {
		return 0
	}
	mem, ok := cg.members[memberID]
	if !ok {
		return kerr.UnknownMemberID.Code
	}
	stale := kerr.StaleMemberEpoch.Code
	if mem.usesClassic() || transactional && version < 6 {
		stale = kerr.IllegalGeneration.Code
	}
	if !transactional && !mem.usesClassic() && version < 9 {
		return kerr.UnsupportedVersion.Code
	}
	switch {
	case epoch == mem.epoch:
		return 0
	case epoch > mem.epoch:
		return stale
	}
	for _, p := range parts {
		t, ok := topics.ByName(p.TP.Topic)
		if !ok {
			return stale
		}
		e, ok := mem.assigned[t.ID][p.TP.Partition]
		if !ok {
			e, ok = mem.pendingRevocation[t.ID][p.TP.Partition]
		}
		if !ok || epoch < e {
			return stale
		}
	}
	return 0
}

// ValidateOffsetFetch is Kafka's check of an OffsetFetch v9+ naming a
// member: in a consumer group the member must exist and give its current
// epoch (STALE_MEMBER_EPOCH). memberID nil with a negative epoch is an
// unchecked fetch (admin tools).
func (m *Manager) ValidateOffsetFetch(groupID string, memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return 0
	}
	g, ok := m.groups[groupID]
	if !ok || g.cg == nil {
		return 0
	}
	id := ""
	if memberID != nil {
		id = *memberID
	}
	mem, ok := g.cg.members[id]
	if !ok {
		return kerr.UnknownMemberID.Code
	}
	if epoch != mem.epoch {
		if mem.usesClassic() {
			return kerr.IllegalGeneration.Code
		}
		return kerr.StaleMemberEpoch.Code
	}
	return 0
}
