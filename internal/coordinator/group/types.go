package group

import (
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Protocol is one assignment protocol a member supports, with its opaque
// subscription metadata.
type Protocol struct {
	Name     string
	Metadata []byte
}

// JoinRequest is a JoinGroup request as the state machine sees it.
type JoinRequest struct {
	GroupID          string
	MemberID         string
	InstanceID       *string
	ClientID         string
	ClientHost       string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration
	ProtocolType     string
	Protocols        []Protocol
	// RequireKnownMemberID is true from JoinGroup v4 (KIP-394): a new
	// dynamic member first gets MEMBER_ID_REQUIRED and its id.
	RequireKnownMemberID bool
}

// JoinMember is one member listed to the leader in a JoinGroup response.
type JoinMember struct {
	MemberID   string
	InstanceID *string
	Metadata   []byte
}

// JoinResult is a JoinGroup response.
type JoinResult struct {
	ErrorCode    int16
	GenerationID int32
	ProtocolType *string
	ProtocolName *string
	LeaderID     string
	MemberID     string
	// SkipAssignment tells a static leader that rejoined a stable group not
	// to compute a new assignment (KIP-814).
	SkipAssignment bool
	Members        []JoinMember
}

// SyncRequest is a SyncGroup request.
type SyncRequest struct {
	GroupID      string
	MemberID     string
	InstanceID   *string
	GenerationID int32
	// ProtocolType and ProtocolName are checked when set (v5+).
	ProtocolType *string
	ProtocolName *string
	// Assignments is the leader's assignment by member id.
	Assignments map[string][]byte
}

// SyncResult is a SyncGroup response.
type SyncResult struct {
	ErrorCode    int16
	ProtocolType *string
	ProtocolName *string
	Assignment   []byte
}

// HeartbeatRequest is a Heartbeat request.
type HeartbeatRequest struct {
	GroupID      string
	MemberID     string
	InstanceID   *string
	GenerationID int32
}

// LeaveMember is one member leaving (v3+ lists several, KIP-345).
type LeaveMember struct {
	MemberID   string
	InstanceID *string
}

// LeaveResult is a LeaveGroup response: a top-level error and, when that is
// 0, one error per member in request order.
type LeaveResult struct {
	ErrorCode int16
	Members   []int16
}

// CommitPartition is one partition's offset in an OffsetCommit request.
type CommitPartition struct {
	TP          kafka.TopicPartition
	Offset      int64
	LeaderEpoch int32
	Metadata    *string
}

// CommitRequest is an OffsetCommit request.
type CommitRequest struct {
	GroupID      string
	MemberID     string
	InstanceID   *string
	GenerationID int32
	// Retention, when positive, is the v2-v4 retention_time_ms: the offsets
	// expire that long after the commit instead of by the broker's policy.
	Retention  time.Duration
	Partitions []CommitPartition
	// Version is the OffsetCommit version: a consumer-protocol member
	// must commit with v9+.
	Version int16
	// GroupNotFoundCode is what a commit with a generation to a group that
	// does not exist gets (ILLEGAL_GENERATION before v9, GROUP_ID_NOT_FOUND
	// from v9, as Kafka).
	GroupNotFoundCode int16
}

// CommitResult is an OffsetCommit (or TxnOffsetCommit) response: a
// per-partition error in request order.
type CommitResult struct {
	Errors []int16
}

// TxnCommitRequest is a TxnOffsetCommit request: offsets a transactional
// producer commits within its transaction.
type TxnCommitRequest struct {
	GroupID string
	// TransactionalID and Version (the request's) decide how the
	// transaction is verified before the write (groupcoord); the group
	// state machine does not use them.
	TransactionalID string
	Version         int16
	ProducerID      int64
	ProducerEpoch   int16
	// MemberID, InstanceID and GenerationID come with v3+ (empty, nil and
	// -1 before): they are then checked against the group.
	MemberID     string
	InstanceID   *string
	GenerationID int32
	Partitions   []CommitPartition
}

// OffsetAndMetadata is a committed offset.
type OffsetAndMetadata struct {
	Offset      int64
	LeaderEpoch int32
	Metadata    string
	CommitTime  time.Time
	// ExpireTime is set by v1 values (explicit retention); zero otherwise.
	ExpireTime time.Time
	// order is the place of the offset's record in the partition's log
	// (its offset when replayed, the order of its write otherwise): a
	// transaction's offset replaces a committed one only when written
	// after it, Kafka's rule (see CompleteTransaction).
	order int64
}

// FetchedOffset is one partition of an OffsetFetch answer.
type FetchedOffset struct {
	TP          kafka.TopicPartition
	Offset      int64
	LeaderEpoch int32
	Metadata    *string
	ErrorCode   int16
}

// MemberDescription is one member in DescribeGroups.
type MemberDescription struct {
	MemberID   string
	InstanceID *string
	ClientID   string
	ClientHost string
	Metadata   []byte
	Assignment []byte
}

// Description is a DescribeGroups answer for one group.
type Description struct {
	ErrorCode    int16
	State        State
	ProtocolType string
	Protocol     string
	Members      []MemberDescription
}

// Listing is one group in ListGroups.
type Listing struct {
	GroupID      string
	ProtocolType string
	// State is Kafka's name of the group's state; Type is "classic" or
	// "consumer".
	State string
	Type  string
}
