package consumerrec

import "github.com/twmb/franz-go/pkg/kbin"

// ConsumerGroupMetadataValue is the group's epoch (record type 3).
type ConsumerGroupMetadataValue struct {
	Epoch int32 // the group epoch
	// MetadataHash is the hash of all the group's subscribed topics
	// (tagged field 0, default 0 and then not written).
	MetadataHash int64
}

// RecordType returns TypeConsumerGroupMetadata.
func (*ConsumerGroupMetadataValue) RecordType() int16 { return TypeConsumerGroupMetadata }

// AppendTo appends the value, version first.
func (v *ConsumerGroupMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendInt32(dst, v.Epoch)
	return appendInt64Tag(dst, v.MetadataHash)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ConsumerGroupMetadataValue) ReadFrom(b []byte) error {
	var x ConsumerGroupMetadataValue
	err := readValue(b, "ConsumerGroupMetadataValue", func(d *decoder) {
		x.Epoch = d.int32()
		d.tags(func(tag int32, fd *decoder) bool {
			if tag != 0 {
				return false
			}
			x.MetadataHash = fd.int64()
			return true
		})
	})
	if err == nil {
		*v = x
	}
	return err
}

// ConsumerGroupTargetAssignmentMetadataValue is the epoch of the group's
// target assignment (record type 6).
type ConsumerGroupTargetAssignmentMetadataValue struct {
	AssignmentEpoch int32 // the assignment epoch
	// AssignmentTimestamp is when the assignment was computed, in ms
	// (tagged field 0, default 0 and then not written).
	AssignmentTimestamp int64
}

// RecordType returns TypeConsumerGroupTargetAssignmentMetadata.
func (*ConsumerGroupTargetAssignmentMetadataValue) RecordType() int16 {
	return TypeConsumerGroupTargetAssignmentMetadata
}

// AppendTo appends the value, version first.
func (v *ConsumerGroupTargetAssignmentMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = kbin.AppendInt32(dst, v.AssignmentEpoch)
	return appendInt64Tag(dst, v.AssignmentTimestamp)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ConsumerGroupTargetAssignmentMetadataValue) ReadFrom(b []byte) error {
	var x ConsumerGroupTargetAssignmentMetadataValue
	err := readValue(b, "ConsumerGroupTargetAssignmentMetadataValue", func(d *decoder) {
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

// ConsumerGroupRegularExpressionValue is the resolution of a subscribed
// regular expression (record type 16).
type ConsumerGroupRegularExpressionValue struct {
	Topics    []string // the topics the expression matched
	Version   int64    // the metadata image version it was resolved at
	Timestamp int64    // when it was resolved, in ms
}

// RecordType returns TypeConsumerGroupRegularExpression.
func (*ConsumerGroupRegularExpressionValue) RecordType() int16 {
	return TypeConsumerGroupRegularExpression
}

// AppendTo appends the value, version first.
func (v *ConsumerGroupRegularExpressionValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = appendCompactStrings(dst, v.Topics)
	dst = kbin.AppendInt64(dst, v.Version)
	dst = kbin.AppendInt64(dst, v.Timestamp)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ConsumerGroupRegularExpressionValue) ReadFrom(b []byte) error {
	var x ConsumerGroupRegularExpressionValue
	err := readValue(b, "ConsumerGroupRegularExpressionValue", func(d *decoder) {
		x.Topics = d.compactStrings("Topics")
		x.Version = d.int64()
		x.Timestamp = d.int64()
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}
