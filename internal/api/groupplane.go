package api

// The group APIs (FindCoordinator, JoinGroup, SyncGroup, Heartbeat,
// LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups,
// DeleteGroups, OffsetDelete) reach the group coordinator through
// GroupPlane; *groupcoord.GroupCoordinator implements it. JoinGroup and
// SyncGroup block their connection's goroutine until the rebalance answers,
// which is Kafka's behaviour too (one request in flight per connection).

import (
	"context"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/groupcoord"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// GroupPlane is the group coordinator as the group handlers see it. Codes
// are Kafka error codes (0 for none).
type GroupPlane interface {
	FindCoordinator(ctx context.Context, groupID, listener string) (runtime.Node, int16)
	JoinGroup(ctx context.Context, req group.JoinRequest) group.JoinResult
	SyncGroup(ctx context.Context, req group.SyncRequest) group.SyncResult
	Heartbeat(ctx context.Context, req group.HeartbeatRequest) int16
	LeaveGroup(ctx context.Context, groupID string, members []group.LeaveMember) group.LeaveResult
	CommitOffsets(ctx context.Context, req group.CommitRequest) group.CommitResult
	FetchOffsets(ctx context.Context, groupID string, parts []kafka.TopicPartition, requireStable bool) ([]group.FetchedOffset, int16)
	DeleteOffsets(ctx context.Context, groupID string, parts []kafka.TopicPartition) (int16, []int16)
	DescribeGroup(ctx context.Context, groupID string) group.Description
	ListGroups(ctx context.Context) ([]group.Listing, int16)
	DeleteGroup(ctx context.Context, groupID string) int16
	ConsumerGroupHeartbeat(ctx context.Context, req group.ConsumerHeartbeatRequest, version int16) group.ConsumerHeartbeatResult
	ConsumerGroupDescribe(ctx context.Context, groupID string) group.ConsumerGroupDescription
	ValidateOffsetFetch(ctx context.Context, groupID string, memberID *string, memberEpoch int32) int16
}

var _ GroupPlane = (*groupcoord.GroupCoordinator)(nil)

// GroupPlaneDeps is what the group handlers need (BrokerDeps.Groups).
type GroupPlaneDeps struct {
	// Coordinator serves the groups; nil leaves the group APIs out.
	Coordinator GroupPlane
	// TxnOffsets takes transactional offset commits; nil (transactions not
	// wired) leaves TxnOffsetCommit out.
	TxnOffsets TxnOffsetCommitter
	// Image is the latest metadata image: OffsetCommit and OffsetDelete
	// refuse partitions that do not exist, and v10 requests name topics by
	// id. Nil treats every topic as unknown.
	Image func() *metadata.Image
}

func (d *GroupPlaneDeps) image() *metadata.Image {
	if d.Image == nil {
		return metadata.EmptyImage()
	}
	return d.Image()
}

// partitionExists reports whether the metadata knows the partition.
func partitionExists(im *metadata.Image, topic string, partition int32) bool {
	_, ok := im.Partition(kafka.TopicPartition{Topic: topic, Partition: partition})
	return ok
}

// allGroupOperations is the DescribeGroups authorized_operations bit field
// of a group with no authorizer: READ (3), DELETE (6) and DESCRIBE (8), the
// operations Kafka supports on groups.
const allGroupOperations int32 = 1<<3 | 1<<6 | 1<<8
