package consumerrec

import (
	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ShareGroupMetadataValue is a share group's epoch (type 11). Unlike the
// consumer group's, MetadataHash is a plain field, always written.
type ShareGroupMetadataValue struct {
	Epoch        int32 // the group epoch
	MetadataHash int64 // the hash of the group's subscribed topics
}

// RecordType returns TypeShareGroupMetadata.
func (*ShareGroupMetadataValue) RecordType() int16 { return TypeShareGroupMetadata }

// AppendTo appends the value, version first.
func (v *ShareGroupMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendInt32(dst, v.Epoch)
	dst = kbin.AppendInt64(dst, v.MetadataHash)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ShareGroupMetadataValue) ReadFrom(b []byte) error {
	var x ShareGroupMetadataValue
	err := readValue(b, "ShareGroupMetadataValue", func(d *decoder) {
		x.Epoch = d.int32()
		x.MetadataHash = d.int64()
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

// ShareGroupMemberMetadataValue is a share member's identity and
// subscription (type 10).
type ShareGroupMemberMetadataValue struct {
	RackID               *string  // the rack id, nil when none
	ClientID             string   // the client id
	ClientHost           string   // the client host
	SubscribedTopicNames []string // the subscribed topic names
}

// RecordType returns TypeShareGroupMemberMetadata.
func (*ShareGroupMemberMetadataValue) RecordType() int16 { return TypeShareGroupMemberMetadata }

// AppendTo appends the value, version first.
func (v *ShareGroupMemberMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendCompactNullableString(dst, v.RackID)
	dst = kbin.AppendCompactString(dst, v.ClientID)
	dst = kbin.AppendCompactString(dst, v.ClientHost)
	dst = appendCompactStrings(dst, v.SubscribedTopicNames)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ShareGroupMemberMetadataValue) ReadFrom(b []byte) error {
	var x ShareGroupMemberMetadataValue
	err := readValue(b, "ShareGroupMemberMetadataValue", func(d *decoder) {
		x.RackID = d.compactNullableString("RackId")
		x.ClientID = d.compactString("ClientId")
		x.ClientHost = d.compactString("ClientHost")
		x.SubscribedTopicNames = d.compactStrings("SubscribedTopicNames")
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

// ShareGroupTargetAssignmentMetadataValue is the epoch of a share group's
// target assignment (type 12).
type ShareGroupTargetAssignmentMetadataValue struct {
	AssignmentEpoch int32 // the assignment epoch
	// AssignmentTimestamp (tagged field 0, Kafka 4.3+) is when the
	// assignment was computed, in ms; 0 is the default, not written.
	AssignmentTimestamp int64
}

// RecordType returns TypeShareGroupTargetAssignmentMetadata.
func (*ShareGroupTargetAssignmentMetadataValue) RecordType() int16 {
	return TypeShareGroupTargetAssignmentMetadata
}

// AppendTo appends the value, version first.
func (v *ShareGroupTargetAssignmentMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendInt32(dst, v.AssignmentEpoch)
	return appendInt64Tag(dst, v.AssignmentTimestamp)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ShareGroupTargetAssignmentMetadataValue) ReadFrom(b []byte) error {
	var x ShareGroupTargetAssignmentMetadataValue
	err := readValue(b, "ShareGroupTargetAssignmentMetadataValue", func(d *decoder) {
		x.AssignmentEpoch = d.int32()
		d.tags(func(tag int32, fd *decoder) bool {
			if tag != 0 {
				return false
			}
			x.AssignmentTimestamp = fd.int64()
			return true
		})
	})
	if err == nil {
		*v = x
	}
	return err
}

// ShareGroupTargetAssignmentMemberValue is a share member's target
// assignment (type 13).
type ShareGroupTargetAssignmentMemberValue struct {
	TopicPartitions []TopicPartition // the assigned partitions
}

// RecordType returns TypeShareGroupTargetAssignmentMember.
func (*ShareGroupTargetAssignmentMemberValue) RecordType() int16 {
	return TypeShareGroupTargetAssignmentMember
}

// AppendTo appends the value, version first.
func (v *ShareGroupTargetAssignmentMemberValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = appendArray(dst, v.TopicPartitions, appendTopicPartition)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ShareGroupTargetAssignmentMemberValue) ReadFrom(b []byte) error {
	var x ShareGroupTargetAssignmentMemberValue
	err := readValue(b, "ShareGroupTargetAssignmentMemberValue", func(d *decoder) {
		x.TopicPartitions = array(d, "TopicPartitions", minTopicPartitions, readTopicPartition)
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

// ShareGroupCurrentMemberAssignmentValue is a share member's epochs,
// state and assignment (type 14): share members get their assignment
// whole, so there is nothing pending revocation.
type ShareGroupCurrentMemberAssignmentValue struct {
	MemberEpoch         int32            // the epoch the member is expected to heartbeat with
	PreviousMemberEpoch int32            // the epoch before the last bump
	State               int8             // Kafka's MemberState id (0, stable)
	AssignedPartitions  []TopicPartition // the partitions assigned to the member
}

// RecordType returns TypeShareGroupCurrentMemberAssignment.
func (*ShareGroupCurrentMemberAssignmentValue) RecordType() int16 {
	return TypeShareGroupCurrentMemberAssignment
}

// AppendTo appends the value, version first.
func (v *ShareGroupCurrentMemberAssignmentValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendInt32(dst, v.MemberEpoch)
	dst = kbin.AppendInt32(dst, v.PreviousMemberEpoch)
	dst = kbin.AppendInt8(dst, v.State)
	dst = appendArray(dst, v.AssignedPartitions, appendTopicPartition)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ShareGroupCurrentMemberAssignmentValue) ReadFrom(b []byte) error {
	var x ShareGroupCurrentMemberAssignmentValue
	err := readValue(b, "ShareGroupCurrentMemberAssignmentValue", func(d *decoder) {
		x.MemberEpoch = d.int32()
		x.PreviousMemberEpoch = d.int32()
		x.State = d.int8()
		x.AssignedPartitions = array(d, "AssignedPartitions", minTopicPartitions, readTopicPartition)
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

// ShareGroupStatePartitionMetadataValue is which topic partitions of a
// share group have state in the share coordinator (type 15): being
// initialized, initialized, or being deleted.
type ShareGroupStatePartitionMetadataValue struct {
	InitializingTopics []ShareTopicPartitions
	InitializedTopics  []ShareTopicPartitions
	DeletingTopics     []ShareTopic
}

// ShareTopicPartitions is a topic and some of its partitions (Kafka's
// TopicPartitionsInfo).
type ShareTopicPartitions struct {
	TopicID    kafka.UUID // the topic id
	TopicName  string     // the topic name
	Partitions []int32    // the partitions
}

// ShareTopic is a topic (Kafka's TopicInfo).
type ShareTopic struct {
	TopicID   kafka.UUID // the topic id
	TopicName string     // the topic name
}

// RecordType returns TypeShareGroupStatePartitionMetadata.
func (*ShareGroupStatePartitionMetadataValue) RecordType() int16 {
	return TypeShareGroupStatePartitionMetadata
}

// AppendTo appends the value, version first.
func (v *ShareGroupStatePartitionMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = appendArray(dst, v.InitializingTopics, appendShareTopicPartitions)
	dst = appendArray(dst, v.InitializedTopics, appendShareTopicPartitions)
	dst = appendArray(dst, v.DeletingTopics, func(dst []byte, t *ShareTopic) []byte {
		dst = kbin.AppendUuid(dst, t.TopicID)
		dst = kbin.AppendCompactString(dst, t.TopicName)
		return noTags(dst)
	})
	return noTags(dst)
}

func appendShareTopicPartitions(dst []byte, t *ShareTopicPartitions) []byte {
	dst = kbin.AppendUuid(dst, t.TopicID)
	dst = kbin.AppendCompactString(dst, t.TopicName)
	dst = appendInt32s(dst, t.Partitions)
	return noTags(dst)
}

// minShareTopic is the smallest ShareTopic(Partitions): uuid, name, tags.
const minShareTopic = 16 + 1 + 1

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ShareGroupStatePartitionMetadataValue) ReadFrom(b []byte) error {
	var x ShareGroupStatePartitionMetadataValue
	err := readValue(b, "ShareGroupStatePartitionMetadataValue", func(d *decoder) {
		x.InitializingTopics = array(d, "InitializingTopics", minShareTopic+1, readShareTopicPartitions)
		x.InitializedTopics = array(d, "InitializedTopics", minShareTopic+1, readShareTopicPartitions)
		x.DeletingTopics = array(d, "DeletingTopics", minShareTopic, func(d *decoder, t *ShareTopic) {
			t.TopicID = d.uuid()
			t.TopicName = d.compactString("TopicName")
			d.skipTags()
		})
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

func readShareTopicPartitions(d *decoder, t *ShareTopicPartitions) {
	t.TopicID = d.uuid()
	t.TopicName = d.compactString("TopicName")
	t.Partitions = d.int32s("Partitions")
	d.skipTags()
}
