package group

// DeleteShareGroupOffsets' group steps (Kafka's
// initiateDeleteShareGroupOffsets, sharePartitionsEligibleForOffsetDeletion
// and completeDeleteShareGroupOffsets): the asked topics move from
// initialized to deleting, the share coordinator deletes their state, and
// the deleted ones leave deleting.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// DeletedTopicOutcome is one topic's answer in DeleteShareGroupOffsets.
type DeletedTopicOutcome struct {
	TopicName    string
	TopicID      kafka.UUID
	ErrorCode    int16
	ErrorMessage *string
}

// ShareOffsetsDeletePlan is the first step's answer: a group-level error,
// the topics refused already, and the state to delete (one topic each,
// every partition), by topic.
type ShareOffsetsDeletePlan struct {
	ErrorCode    int16
	ErrorMessage *string
	Errors       []DeletedTopicOutcome
	Delete       []ShareStateTopic
}

// ShareOffsetsDeleteResult is a DeleteShareGroupOffsets answer: the
// deleted topics, then the refused ones.
type ShareOffsetsDeleteResult struct {
	ErrorCode    int16
	ErrorMessage *string
	Topics       []DeletedTopicOutcome
}

var msgNoOffsetsToDelete = "There is no offset information to delete."

// PrepareShareOffsetsDelete checks that the group is an empty share group
// and moves the asked topics whose partitions are initialized to
// deleting; a topic already deleting (an earlier delete that failed) is
// asked again with all its partitions. reply runs once the record is
// durable.
func (m *Manager) PrepareShareOffsetsDelete(now time.Time, groupID string, topicNames []string, reply func(ShareOffsetsDeletePlan)) {
	m.cgNow = now
	sg, ok := m.share[groupID]
	if !ok {
		msg := "Group " + groupID + " not found."
		if g, other := m.groups[groupID]; other && g.state != Dead {
			msg = "Group " + groupID + " is not a share group."
		}
		reply(ShareOffsetsDeletePlan{ErrorCode: kerr.GroupIDNotFound.Code, ErrorMessage: &msg})
		return
	}
	if len(sg.members) > 0 {
		reply(ShareOffsetsDeletePlan{ErrorCode: kerr.NonEmptyGroup.Code, ErrorMessage: &kerr.NonEmptyGroup.Description})
		return
	}
	if sg.state == nil {
		reply(ShareOffsetsDeletePlan{})
		return
	}
	img := m.topics()
	next := sg.state.clone()
	var plan ShareOffsetsDeletePlan
	for _, name := range topicNames {
		info, ok := img.ByName(name)
		switch {
		case !ok:
			plan.Errors = append(plan.Errors, DeletedTopicOutcome{TopicName: name,
				ErrorCode: kerr.UnknownTopicOrPartition.Code, ErrorMessage: &msgUnknownTopicOrPartition})
		case hasKey(next.initialized, info.ID):
			plan.Delete = append(plan.Delete, ShareStateTopic{TopicID: info.ID, TopicName: name, Partitions: next.initialized[info.ID].partitions})
			delete(next.initialized, info.ID)
			next.deleting[info.ID] = name
		case hasName(next.deleting, info.ID):
			all := make([]int32, info.Partitions)
			for i := range all {
				all[i] = int32(i)
			}
			plan.Delete = append(plan.Delete, ShareStateTopic{TopicID: info.ID, TopicName: name, Partitions: all})
		default:
			plan.Errors = append(plan.Errors, DeletedTopicOutcome{TopicName: name,
				ErrorCode: kerr.UnknownTopicOrPartition.Code, ErrorMessage: &msgNoOffsetsToDelete})
		}
	}
	// Kafka writes the record whenever the group has state metadata.
	m.sgDo(sg, opShareState{next})
	m.cgFlush(func(err error) {
		if err != nil {
			c := writeErrorCode(err)
			reply(ShareOffsetsDeletePlan{ErrorCode: c, ErrorMessage: codeDescription(c)})
			return
		}
		reply(plan)
	})
}

// CompleteShareOffsetsDelete removes the topics whose state the share
// coordinator deleted from deleting; reply gets their answers once the
// record is durable.
func (m *Manager) CompleteShareOffsetsDelete(now time.Time, groupID string, deleted []ShareStateTopic, reply func([]DeletedTopicOutcome, int16)) {
	m.cgNow = now
	sg, ok := m.share[groupID]
	if !ok || sg.state == nil {
		reply(nil, 0)
		return
	}
	next := sg.state.clone()
	out := make([]DeletedTopicOutcome, 0, len(deleted))
	for _, t := range deleted {
		delete(next.deleting, t.TopicID)
		out = append(out, DeletedTopicOutcome{TopicName: t.TopicName, TopicID: t.TopicID})
	}
	m.sgDo(sg, opShareState{next})
	m.cgFlush(func(err error) {
		if err != nil {
			reply(nil, writeErrorCode(err))
			return
		}
		reply(out, 0)
	})
}

func hasKey(m map[kafka.UUID]shareInitTopic, id kafka.UUID) bool { _, ok := m[id]; return ok }

func hasName(m map[kafka.UUID]string, id kafka.UUID) bool { _, ok := m[id]; return ok }
