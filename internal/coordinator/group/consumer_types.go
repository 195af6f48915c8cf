package group

import (
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// TopicInfo is a topic as consumer groups see it.
type TopicInfo struct {
	ID         kafka.UUID
	Name       string
	Partitions int32
}

// Topics is the cluster's topics as consumer groups see them: an immutable
// snapshot the group coordinator hands the Manager (Config.Topics).
type Topics interface {
	ByName(name string) (TopicInfo, bool)
	ByID(id kafka.UUID) (TopicInfo, bool)
	// Names returns every topic name, sorted.
	Names() []string
	// Version changes whenever the topics change (the image's offset).
	Version() int64
}

// TopicPartitions is one topic's partitions, by topic id.
type TopicPartitions struct {
	TopicID    kafka.UUID
	Partitions []int32
}

// ConsumerHeartbeatRequest is a ConsumerGroupHeartbeat request. Nil
// fields (and a RebalanceTimeoutMs of -1) mean "unchanged since the last
// heartbeat", as in Kafka's protocol.
type ConsumerHeartbeatRequest struct {
	GroupID              string
	MemberID             string
	MemberEpoch          int32
	InstanceID           *string
	RackID               *string
	RebalanceTimeoutMs   int32
	SubscribedTopicNames []string
	SubscribedTopicRegex *string
	ServerAssignor       *string
	Owned                []TopicPartitions
	ClientID, ClientHost string
	// CanDescribe filters the topics a regex resolves to by the member's
	// DESCRIBE right (Kafka 4.1+); nil allows every topic.
	CanDescribe func(topic string) bool
}

// ConsumerHeartbeatResult is a ConsumerGroupHeartbeat response.
type ConsumerHeartbeatResult struct {
	ErrorCode         int16
	ErrorMessage      *string
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	// Assignment is nil when the response carries none (the member's
	// assignment did not change).
	Assignment []TopicPartitions
}

// ConsumerMemberDescription is one member in ConsumerGroupDescribe.
type ConsumerMemberDescription struct {
	MemberID             string
	InstanceID, RackID   *string
	MemberEpoch          int32
	ClientID, ClientHost string
	SubscribedTopicNames []string
	SubscribedTopicRegex *string
	Assignment           []DescribedPartitions
	TargetAssignment     []DescribedPartitions
	// Classic is true for a member that uses the classic protocol in a
	// consumer group (MemberType 0; 1 otherwise).
	Classic bool
}

// DescribedPartitions is a topic's partitions with its name, as
// ConsumerGroupDescribe answers them.
type DescribedPartitions struct {
	TopicID    kafka.UUID
	TopicName  string
	Partitions []int32
}

// ConsumerGroupDescription is a ConsumerGroupDescribe answer for one group.
type ConsumerGroupDescription struct {
	ErrorCode       int16
	ErrorMessage    *string
	GroupID         string
	State           string
	GroupEpoch      int32
	AssignmentEpoch int32
	AssignorName    string
	Members         []ConsumerMemberDescription
}
