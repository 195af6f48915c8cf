package consumerrec

// Keys: the record type, then int16-prefixed strings (keys are not
// flexible). Each ReadFrom expects and checks the record type prefix.

import "github.com/twmb/franz-go/pkg/kbin"

// ConsumerGroupMetadataKey is the key of ConsumerGroupMetadata records.
type ConsumerGroupMetadataKey struct {
	GroupID string // the group id
}

// RecordType returns TypeConsumerGroupMetadata.
func (*ConsumerGroupMetadataKey) RecordType() int16 { return TypeConsumerGroupMetadata }

// AppendTo appends the key, record type first.
func (k *ConsumerGroupMetadataKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, TypeConsumerGroupMetadata)
	return kbin.AppendString(dst, k.GroupID)
}

// ReadFrom decodes a key written by AppendTo (or Kafka).
func (k *ConsumerGroupMetadataKey) ReadFrom(b []byte) error {
	var v ConsumerGroupMetadataKey
	err := readKey(b, "ConsumerGroupMetadataKey", TypeConsumerGroupMetadata, func(d *decoder) {
		v.GroupID = d.string16("GroupID")
	})
	if err == nil {
		*k = v
	}
	return err
}

// ConsumerGroupPartitionMetadataKey is the key of ConsumerGroupPartitionMetadata records.
type ConsumerGroupPartitionMetadataKey struct {
	GroupID string // the group id
}

// RecordType returns TypeConsumerGroupPartitionMetadata.
func (*ConsumerGroupPartitionMetadataKey) RecordType() int16 {
	return TypeConsumerGroupPartitionMetadata
}

// AppendTo appends the key, record type first.
func (k *ConsumerGroupPartitionMetadataKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, TypeConsumerGroupPartitionMetadata)
	return kbin.AppendString(dst, k.GroupID)
}

// ReadFrom decodes a key written by AppendTo (or Kafka).
func (k *ConsumerGroupPartitionMetadataKey) ReadFrom(b []byte) error {
	var v ConsumerGroupPartitionMetadataKey
	err := readKey(b, "ConsumerGroupPartitionMetadataKey", TypeConsumerGroupPartitionMetadata, func(d *decoder) {
		v.GroupID = d.string16("GroupID")
	})
	if err == nil {
		*k = v
	}
	return err
}

// ConsumerGroupMemberMetadataKey is the key of ConsumerGroupMemberMetadata records.
type ConsumerGroupMemberMetadataKey struct {
	GroupID  string // the group id
	MemberID string // the member id
}

// RecordType returns TypeConsumerGroupMemberMetadata.
func (*ConsumerGroupMemberMetadataKey) RecordType() int16 { return TypeConsumerGroupMemberMetadata }

// AppendTo appends the key, record type first.
func (k *ConsumerGroupMemberMetadataKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, TypeConsumerGroupMemberMetadata)
	dst = kbin.AppendString(dst, k.GroupID)
	return kbin.AppendString(dst, k.MemberID)
}

// ReadFrom decodes a key written by AppendTo (or Kafka).
func (k *ConsumerGroupMemberMetadataKey) ReadFrom(b []byte) error {
	var v ConsumerGroupMemberMetadataKey
	err := readKey(b, "ConsumerGroupMemberMetadataKey", TypeConsumerGroupMemberMetadata, func(d *decoder) {
		v.GroupID = d.string16("GroupID")
		v.MemberID = d.string16("MemberID")
	})
	if err == nil {
		*k = v
	}
	return err
}

// ConsumerGroupTargetAssignmentMetadataKey is the key of ConsumerGroupTargetAssignmentMetadata records.
type ConsumerGroupTargetAssignmentMetadataKey struct {
	GroupID string // the group id
}

// RecordType returns TypeConsumerGroupTargetAssignmentMetadata.
func (*ConsumerGroupTargetAssignmentMetadataKey) RecordType() int16 {
	return TypeConsumerGroupTargetAssignmentMetadata
}

// AppendTo appends the key, record type first.
func (k *ConsumerGroupTargetAssignmentMetadataKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, TypeConsumerGroupTargetAssignmentMetadata)
	return kbin.AppendString(dst, k.GroupID)
}

// ReadFrom decodes a key written by AppendTo (or Kafka).
func (k *ConsumerGroupTargetAssignmentMetadataKey) ReadFrom(b []byte) error {
	var v ConsumerGroupTargetAssignmentMetadataKey
	err := readKey(b, "ConsumerGroupTargetAssignmentMetadataKey", TypeConsumerGroupTargetAssignmentMetadata, func(d *decoder) {
		v.GroupID = d.string16("GroupID")
	})
	if err == nil {
		*k = v
	}
	return err
}

// ConsumerGroupTargetAssignmentMemberKey is the key of ConsumerGroupTargetAssignmentMember records.
type ConsumerGroupTargetAssignmentMemberKey struct {
	GroupID  string // the group id
	MemberID string // the member id
}

// RecordType returns TypeConsumerGroupTargetAssignmentMember.
func (*ConsumerGroupTargetAssignmentMemberKey) RecordType() int16 {
	return TypeConsumerGroupTargetAssignmentMember
}

// AppendTo appends the key, record type first.
func (k *ConsumerGroupTargetAssignmentMemberKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, TypeConsumerGroupTargetAssignmentMember)
	dst = kbin.AppendString(dst, k.GroupID)
	return kbin.AppendString(dst, k.MemberID)
}

// ReadFrom decodes a key written by AppendTo (or Kafka).
func (k *ConsumerGroupTargetAssignmentMemberKey) ReadFrom(b []byte) error {
	var v ConsumerGroupTargetAssignmentMemberKey
	err := readKey(b, "ConsumerGroupTargetAssignmentMemberKey", TypeConsumerGroupTargetAssignmentMember, func(d *decoder) {
		v.GroupID = d.string16("GroupID")
		v.MemberID = d.string16("MemberID")
	})
	if err == nil {
		*k = v
	}
	return err
}

// ConsumerGroupCurrentMemberAssignmentKey is the key of ConsumerGroupCurrentMemberAssignment records.
type ConsumerGroupCurrentMemberAssignmentKey struct {
	GroupID  string // the group id
	MemberID string // the member id
}

// RecordType returns TypeConsumerGroupCurrentMemberAssignment.
func (*ConsumerGroupCurrentMemberAssignmentKey) RecordType() int16 {
	return TypeConsumerGroupCurrentMemberAssignment
}

// AppendTo appends the key, record type first.
func (k *ConsumerGroupCurrentMemberAssignmentKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, TypeConsumerGroupCurrentMemberAssignment)
	dst = kbin.AppendString(dst, k.GroupID)
	return kbin.AppendString(dst, k.MemberID)
}

// ReadFrom decodes a key written by AppendTo (or Kafka).
func (k *ConsumerGroupCurrentMemberAssignmentKey) ReadFrom(b []byte) error {
	var v ConsumerGroupCurrentMemberAssignmentKey
	err := readKey(b, "ConsumerGroupCurrentMemberAssignmentKey", TypeConsumerGroupCurrentMemberAssignment, func(d *decoder) {
		v.GroupID = d.string16("GroupID")
		v.MemberID = d.string16("MemberID")
	})
	if err == nil {
		*k = v
	}
	return err
}

// ConsumerGroupRegularExpressionKey is the key of ConsumerGroupRegularExpression records.
type ConsumerGroupRegularExpressionKey struct {
	GroupID           string // the group id
	RegularExpression string // the regular expression
}

// RecordType returns TypeConsumerGroupRegularExpression.
func (*ConsumerGroupRegularExpressionKey) RecordType() int16 {
	return TypeConsumerGroupRegularExpression
}

// AppendTo appends the key, record type first.
func (k *ConsumerGroupRegularExpressionKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, TypeConsumerGroupRegularExpression)
	dst = kbin.AppendString(dst, k.GroupID)
	return kbin.AppendString(dst, k.RegularExpression)
}

// ReadFrom decodes a key written by AppendTo (or Kafka).
func (k *ConsumerGroupRegularExpressionKey) ReadFrom(b []byte) error {
	var v ConsumerGroupRegularExpressionKey
	err := readKey(b, "ConsumerGroupRegularExpressionKey", TypeConsumerGroupRegularExpression, func(d *decoder) {
		v.GroupID = d.string16("GroupID")
		v.RegularExpression = d.string16("RegularExpression")
	})
	if err == nil {
		*k = v
	}
	return err
}
