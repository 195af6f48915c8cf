package group

// The share-group offsets admin APIs (KIP-932): DescribeShareGroupOffsets,
// AlterShareGroupOffsets and DeleteShareGroupOffsets, as Kafka 4.4's
// GroupMetadataManager serves their group-side steps. The share state
// itself lives in the share coordinator: these methods say what to ask
// it, and record in ShareGroupStatePartitionMetadata what it did.

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// UninitializedStartOffset is the start offset answered for a partition
// without share state (Kafka's PartitionFactory.UNINITIALIZED_START_OFFSET).
const UninitializedStartOffset = -1

// ShareOffsetsTopic is a topic asked for by name with its partitions.
type ShareOffsetsTopic struct {
	TopicName  string
	Partitions []int32
}

// ShareOffsetsPlan is what DescribeShareGroupOffsets reads: the share
// state summaries of Read (topics the image has), and Missing, topics the
// image does not have, answered with start offset -1 at once.
type ShareOffsetsPlan struct {
	Read    []ShareStateTopic
	Missing []ShareOffsetsTopic
}

// PlanShareOffsets resolves a DescribeShareGroupOffsets group's topics
// against the image (Kafka's describeShareGroupOffsets): Kafka does not
// look at the group, a partition without state answers -1 from the share
// coordinator.
func (m *Manager) PlanShareOffsets(topics []ShareOffsetsTopic) ShareOffsetsPlan {
	img := m.topics()
	var p ShareOffsetsPlan
	for _, t := range topics {
		info, ok := img.ByName(t.TopicName)
		if !ok {
			p.Missing = append(p.Missing, ShareOffsetsTopic{TopicName: t.TopicName, Partitions: slices.Clone(t.Partitions)})
			continue
		}
		p.Read = append(p.Read, ShareStateTopic{TopicID: info.ID, TopicName: t.TopicName, Partitions: slices.Clone(t.Partitions)})
	}
	return p
}

// PlanAllShareOffsets is the initialized partitions of a group's topics
// the image still has, named from the image (Kafka's
// describeShareGroupAllOffsets). An unknown group, or one of another
// type, has none: Kafka answers it with no topics and no error.
func (m *Manager) PlanAllShareOffsets(groupID string) ShareOffsetsPlan {
	sg, ok := m.share[groupID]
	if !ok || sg.state == nil {
		return ShareOffsetsPlan{}
	}
	img := m.topics()
	var p ShareOffsetsPlan
	for _, id := range slices.SortedFunc(maps.Keys(sg.state.initialized), compareUUID) {
		info, ok := img.ByID(id)
		if !ok {
			continue
		}
		p.Read = append(p.Read, ShareStateTopic{TopicID: id, TopicName: info.Name, Partitions: slices.Clone(sg.state.initialized[id].partitions)})
	}
	return p
}

// ShareOffsetsAlterTopic is one topic of an AlterShareGroupOffsets.
type ShareOffsetsAlterTopic struct {
	TopicName  string
	Partitions []ShareOffsetsAlterPartition
}

// ShareOffsetsAlterPartition is a partition's new start offset.
type ShareOffsetsAlterPartition struct {
	Partition   int32
	StartOffset int64
}

// PartitionOutcome is one partition's answer in the alter response.
type PartitionOutcome struct {
	Partition    int32
	ErrorCode    int16
	ErrorMessage *string
}

// TopicOutcome is one topic's answer in the alter response; a topic the
// image does not have has a zero TopicID.
type TopicOutcome struct {
	TopicName  string
	TopicID    kafka.UUID
	Partitions []PartitionOutcome
}

// ShareInitPartition is a partition to initialize at a start offset.
type ShareInitPartition struct {
	Partition   int32
	StartOffset int64
}

// ShareInitTopic is a topic's partitions to initialize.
type ShareInitTopic struct {
	TopicID    kafka.UUID
	TopicName  string
	Partitions []ShareInitPartition
}

// ShareInitRequest is the InitializeShareGroupState an alter sends, the
// group epoch as the state epoch (Kafka's buildInitializeShareGroupState).
type ShareInitRequest struct {
	GroupID    string
	StateEpoch int32
	Topics     []ShareInitTopic
}

// AlterShareOffsetsResult is the group's step of an alter: the answer so
// far and the state to initialize (no topics: nothing to ask).
type AlterShareOffsetsResult struct {
	ErrorCode    int16
	ErrorMessage *string
	Topics       []TopicOutcome
	Init         ShareInitRequest
}

var msgUnknownTopicOrPartition = kerr.UnknownTopicOrPartition.Description

// AlterShareOffsets is the group's step of AlterShareGroupOffsets (Kafka's
// alterShareGroupOffsets): the group, created when unknown, must be empty;
// partitions of known topics below their count move to initializing, and
// the result says which to initialize at which offset. reply runs once
// the record is durable. The outcome of the initialization comes back
// through ShareStateInitialized.
func (m *Manager) AlterShareOffsets(now time.Time, groupID string, topics []ShareOffsetsAlterTopic, reply func(AlterShareOffsetsResult)) {
	m.cgNow = now
	sg, code, msg := m.shareGroupForAlter(groupID)
	if code != 0 {
		reply(AlterShareOffsetsResult{ErrorCode: code, ErrorMessage: &msg})
		return
	}
	img := m.topics()
	res := AlterShareOffsetsResult{Init: ShareInitRequest{GroupID: groupID, StateEpoch: sg.groupEpoch}}
	changes := map[kafka.UUID]shareInitTopic{}
	for _, t := range topics {
		info, ok := img.ByName(t.TopicName)
		out := TopicOutcome{TopicName: t.TopicName, TopicID: info.ID}
		var init ShareInitTopic
		for _, p := range t.Partitions {
			if !ok || p.Partition >= info.Partitions {
				out.Partitions = append(out.Partitions, PartitionOutcome{Partition: p.Partition,
					ErrorCode: kerr.UnknownTopicOrPartition.Code, ErrorMessage: &msgUnknownTopicOrPartition})
				continue
			}
			out.Partitions = append(out.Partitions, PartitionOutcome{Partition: p.Partition})
			init.Partitions = append(init.Partitions, ShareInitPartition{Partition: p.Partition, StartOffset: p.StartOffset})
		}
		res.Topics = append(res.Topics, out)
		if !ok {
			continue
		}
		// Kafka records the topic as initializing even with no valid
		// partition, as its InitMapValue with an empty set.
		parts := make([]int32, 0, len(init.Partitions))
		for _, p := range init.Partitions {
			parts = append(parts, p.Partition)
		}
		changes[info.ID] = shareInitTopic{name: t.TopicName, partitions: unionPartitions(changes[info.ID].partitions, parts), since: now}
		if len(init.Partitions) > 0 {
			init.TopicID, init.TopicName = info.ID, t.TopicName
			res.Init.Topics = append(res.Init.Topics, init)
		}
	}
	if len(changes) > 0 {
		if _, known := m.share[groupID]; !known {
			m.addShareGroup(sg)
		}
		m.sgDo(sg, opShareState{sg.state.withAltering(changes)})
	}
	m.cgFlush(func(err error) {
		if err != nil {
			c := writeErrorCode(err)
			reply(AlterShareOffsetsResult{ErrorCode: c, ErrorMessage: codeDescription(c)})
			return
		}
		reply(res)
	})
}

// shareGroupForAlter is Kafka's getOrMaybeCreateShareGroup(id, true)
// followed by throwIfShareGroupIsNotEmpty. A new group is not added to
// the manager until it has a record to write.
func (m *Manager) shareGroupForAlter(id string) (*shareGroup, int16, string) {
	if sg, ok := m.share[id]; ok {
		if len(sg.members) > 0 {
			return nil, kerr.NonEmptyGroup.Code, kerr.NonEmptyGroup.Description
		}
		return sg, 0, ""
	}
	if g, ok := m.groups[id]; ok && g.state != Dead {
		return nil, kerr.GroupIDNotFound.Code, "Group " + id + " is not a share group."
	}
	return newShareGroup(id), 0, ""
}

func (m *Manager) addShareGroup(sg *shareGroup) {
	if m.share == nil {
		m.share = make(map[string]*shareGroup)
	}
	delete(m.groups, sg.id) // a dead group of another type of that id
	m.share[sg.id] = sg
}

// withAltering adds the altered partitions to the initializing topics,
// as Kafka's addInitializingTopicsRecords for an alter: initialized
// partitions stay initialized (the share coordinator overwrites their
// state), a topic altered again is no longer deleting.
func (s *shareStateMeta) withAltering(changes map[kafka.UUID]shareInitTopic) *shareStateMeta {
	n := s.clone()
	for id, c := range changes {
		cur := n.initializing[id]
		n.initializing[id] = shareInitTopic{name: c.name, partitions: unionPartitions(cur.partitions, c.partitions), since: c.since}
		delete(n.deleting, id)
	}
	return n
}

func codeDescription(code int16) *string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return &e.Description
	}
	return nil
}
