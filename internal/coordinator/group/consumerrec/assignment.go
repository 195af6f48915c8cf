package consumerrec

import (
	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ConsumerGroupTargetAssignmentMemberValue is a member's target assignment
// (record type 7).
type ConsumerGroupTargetAssignmentMemberValue struct {
	TopicPartitions []TopicPartition // the assigned partitions
}

// TopicPartition is one topic of a target assignment.
type TopicPartition struct {
	TopicID    kafka.UUID // the topic id
	Partitions []int32    // the partition indexes
}

// ConsumerGroupCurrentMemberAssignmentValue is a member's epoch, state and
// current assignment (record type 8).
type ConsumerGroupCurrentMemberAssignmentValue struct {
	MemberEpoch         int32 // the epoch the member is expected to heartbeat with
	PreviousMemberEpoch int32 // the epoch before the last bump, accepted on retry
	State               int8  // the member state (Kafka's MemberState id)
	// AssignedPartitions are the partitions assigned to (or owned by) the
	// member.
	AssignedPartitions []TopicPartitions
	// PartitionsPendingRevocation must be revoked by the member.
	PartitionsPendingRevocation []TopicPartitions
}

// TopicPartitions is one topic of a current assignment.
type TopicPartitions struct {
	TopicID    kafka.UUID // the topic id
	Partitions []int32    // the partition ids
	// AssignmentEpochs (tagged field 0) holds, parallel to Partitions, the
	// epoch each partition was assigned at (to fence zombie commits). nil
	// is Kafka's null and is written as an explicit null; empty is the
	// default and is not written; an absent tag reads as empty.
	AssignmentEpochs []int32
}

// minTopicPartitions is the smallest TopicPartition(s): uuid, array, tags.
const minTopicPartitions = 16 + 1 + 1

// RecordType returns TypeConsumerGroupTargetAssignmentMember.
func (*ConsumerGroupTargetAssignmentMemberValue) RecordType() int16 {
	return TypeConsumerGroupTargetAssignmentMember
}

// AppendTo appends the value, version first.
func (v *ConsumerGroupTargetAssignmentMemberValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = appendArray(dst, v.TopicPartitions, appendTopicPartition)
	return noTags(dst)
}

func appendTopicPartition(dst []byte, tp *TopicPartition) []byte {
	dst = kbin.AppendUuid(dst, tp.TopicID)
	dst = appendInt32s(dst, tp.Partitions)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ConsumerGroupTargetAssignmentMemberValue) ReadFrom(b []byte) error {
	var x ConsumerGroupTargetAssignmentMemberValue
	err := readValue(b, "ConsumerGroupTargetAssignmentMemberValue", func(d *decoder) {
		x.TopicPartitions = array(d, "TopicPartitions", minTopicPartitions, readTopicPartition)
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

func readTopicPartition(d *decoder, tp *TopicPartition) {
	tp.TopicID = d.uuid()
	tp.Partitions = d.int32s("Partitions")
	d.skipTags()
}

// RecordType returns TypeConsumerGroupCurrentMemberAssignment.
func (*ConsumerGroupCurrentMemberAssignmentValue) RecordType() int16 {
	return TypeConsumerGroupCurrentMemberAssignment
}

// AppendTo appends the value, version first.
func (v *ConsumerGroupCurrentMemberAssignmentValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendInt32(dst, v.MemberEpoch)
	dst = kbin.AppendInt32(dst, v.PreviousMemberEpoch)
	dst = kbin.AppendInt8(dst, v.State)
	dst = appendArray(dst, v.AssignedPartitions, appendTopicPartitions)
	dst = appendArray(dst, v.PartitionsPendingRevocation, appendTopicPartitions)
	return noTags(dst)
}

func appendTopicPartitions(dst []byte, tp *TopicPartitions) []byte {
	dst = kbin.AppendUuid(dst, tp.TopicID)
	dst = appendInt32s(dst, tp.Partitions)
	if tp.AssignmentEpochs != nil && len(tp.AssignmentEpochs) == 0 {
		return noTags(dst)
	}
	dst = kbin.AppendUvarint(dst, 1)
	return appendTag(dst, 0, appendNullableInt32s(nil, tp.AssignmentEpochs))
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ConsumerGroupCurrentMemberAssignmentValue) ReadFrom(b []byte) error {
	var x ConsumerGroupCurrentMemberAssignmentValue
	err := readValue(b, "ConsumerGroupCurrentMemberAssignmentValue", func(d *decoder) {
		x.MemberEpoch = d.int32()
		x.PreviousMemberEpoch = d.int32()
		x.State = d.int8()
		x.AssignedPartitions = array(d, "AssignedPartitions", minTopicPartitions, readTopicPartitions)
		x.PartitionsPendingRevocation = array(d, "PartitionsPendingRevocation", minTopicPartitions, readTopicPartitions)
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

func readTopicPartitions(d *decoder, tp *TopicPartitions) {
	tp.TopicID = d.uuid()
	tp.Partitions = d.int32s("Partitions")
	tp.AssignmentEpochs = []int32{}
	d.tags(func(tag int32, fd *decoder) bool {
		if tag != 0 {
			return false
		}
		tp.AssignmentEpochs = fd.nullableInt32s("AssignmentEpochs")
		return true
	})
}
