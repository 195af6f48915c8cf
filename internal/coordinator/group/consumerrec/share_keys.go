package consumerrec

// The keys of the share group records (KIP-932) Kafka 4.4 keeps in
// __consumer_offsets: a record type, then int16-prefixed strings.

import "github.com/twmb/franz-go/pkg/kbin"

// Share group record types (Kafka 4.4's apiKey of each schema). Type 9,
// ShareGroupPartitionMetadata, existed before 4.1 and is gone from 4.4:
// Kafka skips it on load, as the group Manager does.
const (
	TypeShareGroupMemberMetadata           int16 = 10
	TypeShareGroupMetadata                 int16 = 11
	TypeShareGroupTargetAssignmentMetadata int16 = 12
	TypeShareGroupTargetAssignmentMember   int16 = 13
	TypeShareGroupCurrentMemberAssignment  int16 = 14
	TypeShareGroupStatePartitionMetadata   int16 = 15
)

// IsShareRecordType reports whether t is one of the share group types
// above.
func IsShareRecordType(t int16) bool {
	return t >= TypeShareGroupMemberMetadata && t <= TypeShareGroupStatePartitionMetadata
}

// ShareGroupKey is the key of the group-level share records (types 11, 12
// and 15): the group id under one of those record types.
type ShareGroupKey struct {
	Type    int16  // TypeShareGroupMetadata, ...TargetAssignmentMetadata or ...StatePartitionMetadata
	GroupID string // the group id
}

// RecordType returns the key's type.
func (k *ShareGroupKey) RecordType() int16 { return k.Type }

// AppendTo appends the key, record type first.
func (k *ShareGroupKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, k.Type)
	return kbin.AppendString(dst, k.GroupID)
}

// ReadFrom decodes a key of the type k.Type holds.
func (k *ShareGroupKey) ReadFrom(b []byte) error {
	v := ShareGroupKey{Type: k.Type}
	err := readKey(b, "ShareGroupKey", k.Type, func(d *decoder) {
		v.GroupID = d.string16("GroupId")
	})
	if err == nil {
		*k = v
	}
	return err
}

// ShareMemberKey is the key of the member-level share records (types 10,
// 13 and 14): group id and member id.
type ShareMemberKey struct {
	Type     int16  // TypeShareGroupMemberMetadata, ...TargetAssignmentMember or ...CurrentMemberAssignment
	GroupID  string // the group id
	MemberID string // the member id
}

// RecordType returns the key's type.
func (k *ShareMemberKey) RecordType() int16 { return k.Type }

// AppendTo appends the key, record type first.
func (k *ShareMemberKey) AppendTo(dst []byte) []byte {
	dst = appendKeyHeader(dst, k.Type)
	dst = kbin.AppendString(dst, k.GroupID)
	return kbin.AppendString(dst, k.MemberID)
}

// ReadFrom decodes a key of the type k.Type holds.
func (k *ShareMemberKey) ReadFrom(b []byte) error {
	v := ShareMemberKey{Type: k.Type}
	err := readKey(b, "ShareMemberKey", k.Type, func(d *decoder) {
		v.GroupID = d.string16("GroupId")
		v.MemberID = d.string16("MemberId")
	})
	if err == nil {
		*k = v
	}
	return err
}
