package consumerrec

import "fmt"

// NewShareKey returns an empty key of a share group record type.
func NewShareKey(recordType int16) (Key, error) {
	switch recordType {
	case TypeShareGroupMetadata, TypeShareGroupTargetAssignmentMetadata, TypeShareGroupStatePartitionMetadata:
		return &ShareGroupKey{Type: recordType}, nil
	case TypeShareGroupMemberMetadata, TypeShareGroupTargetAssignmentMember, TypeShareGroupCurrentMemberAssignment:
		return &ShareMemberKey{Type: recordType}, nil
	}
	return nil, fmt.Errorf("%w: %d is not a share group type", ErrUnknownRecordType, recordType)
}

// NewShareValue returns an empty value of a share group record type.
func NewShareValue(recordType int16) (Value, error) {
	switch recordType {
	case TypeShareGroupMetadata:
		return new(ShareGroupMetadataValue), nil
	case TypeShareGroupMemberMetadata:
		return new(ShareGroupMemberMetadataValue), nil
	case TypeShareGroupTargetAssignmentMetadata:
		return new(ShareGroupTargetAssignmentMetadataValue), nil
	case TypeShareGroupTargetAssignmentMember:
		return new(ShareGroupTargetAssignmentMemberValue), nil
	case TypeShareGroupCurrentMemberAssignment:
		return new(ShareGroupCurrentMemberAssignmentValue), nil
	case TypeShareGroupStatePartitionMetadata:
		return new(ShareGroupStatePartitionMetadataValue), nil
	}
	return nil, fmt.Errorf("%w: %d is not a share group type", ErrUnknownRecordType, recordType)
}

// DecodeShare decodes a share group record; the Value is nil for a
// tombstone. A key of another type fails with ErrUnknownRecordType.
func DecodeShare(key, value []byte) (Key, Value, error) {
	t, err := RecordType(key)
	if err != nil {
		return nil, nil, err
	}
	k, err := NewShareKey(t)
	if err != nil {
		return nil, nil, err
	}
	if err := k.ReadFrom(key); err != nil {
		return nil, nil, err
	}
	if value == nil {
		return k, nil, nil
	}
	v, err := NewShareValue(t)
	if err != nil {
		return nil, nil, err
	}
	if err := v.ReadFrom(value); err != nil {
		return nil, nil, err
	}
	return k, v, nil
}
