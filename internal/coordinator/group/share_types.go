package group

import (
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ShareConfig holds the group.share.* settings (KIP-932). A zero
// ShareConfig is DefaultShareConfig(); otherwise a zero field takes
// Kafka's default, except AssignmentInterval, whose zero is Kafka's 0
// (compute at every epoch change).
type ShareConfig struct {
	// SessionTimeout is group.share.session.timeout.ms (45 s).
	SessionTimeout time.Duration
	// HeartbeatInterval is group.share.heartbeat.interval.ms (5 s).
	HeartbeatInterval time.Duration
	// MaxSize is group.share.max.size (200).
	MaxSize int
	// InitializeRetryInterval is group.share.initialize.retry.interval.ms
	// (30 s): partitions still initializing after it are asked again.
	InitializeRetryInterval time.Duration
	// AssignmentInterval is group.share.assignment.interval.ms (1 s): a
	// new target assignment is computed at most this often, at the first
	// heartbeat after it (KIP-1263); zero or less computes at once.
	AssignmentInterval time.Duration
}

// DefaultShareConfig returns Kafka 4.4's defaults.
func DefaultShareConfig() ShareConfig {
	return ShareConfig{SessionTimeout: 45 * time.Second, HeartbeatInterval: 5 * time.Second, MaxSize: 200,
		InitializeRetryInterval: 30 * time.Second, AssignmentInterval: time.Second}
}

// withDefaults fills the zero fields with Kafka's defaults.
func (c ShareConfig) withDefaults() ShareConfig {
	if c == (ShareConfig{}) {
		return DefaultShareConfig()
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 45 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.MaxSize <= 0 {
		c.MaxSize = 200
	}
	if c.InitializeRetryInterval <= 0 {
		c.InitializeRetryInterval = 30 * time.Second
	}
	c.AssignmentInterval = max(c.AssignmentInterval, 0)
	return c
}

// ShareHeartbeatRequest is a ShareGroupHeartbeat request. A nil RackID or
// SubscribedTopicNames means "unchanged since the last heartbeat".
type ShareHeartbeatRequest struct {
	GroupID string
	// MemberID is chosen by the client (KIP-932: a UUID it generates).
	MemberID             string
	MemberEpoch          int32
	RackID               *string
	SubscribedTopicNames []string
	ClientID, ClientHost string
}

// ShareHeartbeatResult is a ShareGroupHeartbeat response.
type ShareHeartbeatResult struct {
	ErrorCode         int16
	ErrorMessage      *string
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	// Assignment is nil when the response carries none.
	Assignment []TopicPartitions
	// Initialize, when set, is share state the group coordinator must
	// initialize through the share persister once the heartbeat's records
	// are durable (Kafka does it after answering); its outcome comes back
	// through Manager.ShareStateInitialized or ShareStateUninitialized.
	Initialize *ShareStateRequest
}

// ShareStateTopic is a topic's partitions in a share state request.
type ShareStateTopic struct {
	TopicID    kafka.UUID
	TopicName  string
	Partitions []int32 // sorted
	// StartAtZero: the partitions are new ones of a topic the group already
	// has and start at offset 0 instead of share.auto.offset.reset's
	// (initialization only).
	StartAtZero bool
}

// ShareStateRequest is what the share persister must initialize or
// delete for a group (Kafka's Initialize/DeleteShareGroupStateParameters):
// the group's topic partitions, with the group epoch as the state epoch.
type ShareStateRequest struct {
	GroupID    string
	GroupEpoch int32
	Topics     []ShareStateTopic
}

// ShareMemberDescription is one member in ShareGroupDescribe.
type ShareMemberDescription struct {
	MemberID             string
	RackID               *string
	MemberEpoch          int32
	ClientID, ClientHost string
	SubscribedTopicNames []string
	Assignment           []DescribedPartitions
}

// ShareGroupDescription is a ShareGroupDescribe answer for one group.
type ShareGroupDescription struct {
	ErrorCode       int16
	ErrorMessage    *string
	GroupID         string
	State           string
	GroupEpoch      int32
	AssignmentEpoch int32
	AssignorName    string
	Members         []ShareMemberDescription
}
