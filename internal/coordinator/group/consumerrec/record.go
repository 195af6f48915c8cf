package consumerrec

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// Record types: the int16 that starts a key, Kafka's apiKey of the record's
// schema (CoordinatorRecordType). Other types share __consumer_offsets
// (offset commits 0 and 1, classic groups 2, share and streams groups).
const (
	TypeConsumerGroupMetadata                 int16 = 3
	TypeConsumerGroupPartitionMetadata        int16 = 4
	TypeConsumerGroupMemberMetadata           int16 = 5
	TypeConsumerGroupTargetAssignmentMetadata int16 = 6
	TypeConsumerGroupTargetAssignmentMember   int16 = 7
	TypeConsumerGroupCurrentMemberAssignment  int16 = 8
	TypeConsumerGroupRegularExpression        int16 = 16
)

// ValueVersion is the one value version of every record type here (4.4).
const ValueVersion int16 = 0

var (
	// ErrUnknownRecordType is returned for a key whose type is not one of
	// the consumer group types above.
	ErrUnknownRecordType = errors.New("consumerrec: not a consumer group record type")
	// ErrUnknownVersion is returned for a value whose version this package
	// does not read (Kafka's UnknownRecordVersionException).
	ErrUnknownVersion = errors.New("consumerrec: unknown value version")
)

// Key is one of the key types, *ConsumerGroupMetadataKey and its siblings.
type Key interface {
	RecordType() int16
	AppendTo(dst []byte) []byte
	ReadFrom(b []byte) error
}

// Value is one of the value types, *ConsumerGroupMetadataValue and its
// siblings.
type Value interface {
	RecordType() int16
	AppendTo(dst []byte) []byte
	ReadFrom(b []byte) error
}

// RecordType returns the type a key starts with, of any record in
// __consumer_offsets, ours or not.
func RecordType(key []byte) (int16, error) {
	if len(key) < 2 {
		return 0, fmt.Errorf("consumerrec: key of %d bytes has no record type", len(key))
	}
	return int16(uint16(key[0])<<8 | uint16(key[1])), nil
}

// NewKey returns an empty key of the given type.
func NewKey(recordType int16) (Key, error) {
	switch recordType {
	case TypeConsumerGroupMetadata:
		return new(ConsumerGroupMetadataKey), nil
	case TypeConsumerGroupPartitionMetadata:
		return new(ConsumerGroupPartitionMetadataKey), nil
	case TypeConsumerGroupMemberMetadata:
		return new(ConsumerGroupMemberMetadataKey), nil
	case TypeConsumerGroupTargetAssignmentMetadata:
		return new(ConsumerGroupTargetAssignmentMetadataKey), nil
	case TypeConsumerGroupTargetAssignmentMember:
		return new(ConsumerGroupTargetAssignmentMemberKey), nil
	case TypeConsumerGroupCurrentMemberAssignment:
		return new(ConsumerGroupCurrentMemberAssignmentKey), nil
	case TypeConsumerGroupRegularExpression:
		return new(ConsumerGroupRegularExpressionKey), nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownRecordType, recordType)
}

// NewValue returns an empty value of the given type.
func NewValue(recordType int16) (Value, error) {
	switch recordType {
	case TypeConsumerGroupMetadata:
		return new(ConsumerGroupMetadataValue), nil
	case TypeConsumerGroupPartitionMetadata:
		return new(ConsumerGroupPartitionMetadataValue), nil
	case TypeConsumerGroupMemberMetadata:
		return new(ConsumerGroupMemberMetadataValue), nil
	case TypeConsumerGroupTargetAssignmentMetadata:
		return new(ConsumerGroupTargetAssignmentMetadataValue), nil
	case TypeConsumerGroupTargetAssignmentMember:
		return new(ConsumerGroupTargetAssignmentMemberValue), nil
	case TypeConsumerGroupCurrentMemberAssignment:
		return new(ConsumerGroupCurrentMemberAssignmentValue), nil
	case TypeConsumerGroupRegularExpression:
		return new(ConsumerGroupRegularExpressionValue), nil
	}
	return nil, fmt.Errorf("%w: %d", ErrUnknownRecordType, recordType)
}

// DecodeKey decodes a key of any consumer group type into its Go type; an
// other type fails with ErrUnknownRecordType (check RecordType first to
// route the rest of __consumer_offsets elsewhere).
func DecodeKey(key []byte) (Key, error) {
	t, err := RecordType(key)
	if err != nil {
		return nil, err
	}
	k, err := NewKey(t)
	if err != nil {
		return nil, err
	}
	if err := k.ReadFrom(key); err != nil {
		return nil, err
	}
	return k, nil
}

// DecodeValue decodes a value of the given record type. A nil value is a
// tombstone: it returns a nil Value and no error.
func DecodeValue(recordType int16, value []byte) (Value, error) {
	if value == nil {
		return nil, nil
	}
	v, err := NewValue(recordType)
	if err != nil {
		return nil, err
	}
	if err := v.ReadFrom(value); err != nil {
		return nil, err
	}
	return v, nil
}

// Decode decodes a record; the Value is nil for a tombstone.
func Decode(key, value []byte) (Key, Value, error) {
	k, err := DecodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	v, err := DecodeValue(k.RecordType(), value)
	if err != nil {
		return nil, nil, err
	}
	return k, v, nil
}

// Encode returns a record's key and value bytes; a nil v gives a tombstone
// (nil value). A value of another type than the key's is a programming
// error and panics.
func Encode(k Key, v Value) (key, value []byte) {
	key = k.AppendTo(nil)
	if v == nil {
		return key, nil
	}
	if v.RecordType() != k.RecordType() {
		panic(fmt.Sprintf("consumerrec: value of type %d under a key of type %d", v.RecordType(), k.RecordType()))
	}
	return key, v.AppendTo(nil)
}

// readKey decodes a key of type want with read, which fills the fields.
func readKey(b []byte, name string, want int16, read func(*decoder)) error {
	d := newDecoder(b)
	if got := d.int16(); d.ok() && got != want {
		return fmt.Errorf("consumerrec: reading %s: record type %d, want %d", name, got, want)
	}
	read(d)
	if err := d.finish(); err != nil {
		return fmt.Errorf("consumerrec: reading %s: %w", name, err)
	}
	return nil
}

// readValue decodes a version-prefixed value with read.
func readValue(b []byte, name string, read func(*decoder)) error {
	d := newDecoder(b)
	if v := d.int16(); d.ok() && v != ValueVersion {
		return fmt.Errorf("%w: %s version %d", ErrUnknownVersion, name, v)
	}
	read(d)
	if err := d.finish(); err != nil {
		return fmt.Errorf("consumerrec: reading %s: %w", name, err)
	}
	return nil
}

func appendKeyHeader(dst []byte, recordType int16) []byte { return kbin.AppendInt16(dst, recordType) }

func appendValueHeader(dst []byte) []byte { return kbin.AppendInt16(dst, ValueVersion) }
