package api

// The interfaces below are what the handlers of both listener kinds need
// of the node besides the data and group planes. Controller operations go
// through AdminController rather than calling internal/controller directly
// because a response may only be sent once its records are committed and
// replayed (apply-on-commit): the quorum and the one serial runner that
// orders operations live outside this package.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
)

// MetadataView is this node's view of the cluster metadata.
type MetadataView interface {
	// Image is the latest published metadata image.
	Image() *metadata.Image
}

// AdminController is the active controller, reached locally or forwarded:
// each operation is computed by the active controller against its latest
// image, proposed through the quorum and answered once committed and
// applied. An error means the operation did not run to completion (see
// ControllerErrorCode). *broker.ControllerChannel implements it.
type AdminController interface {
	CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error)
	DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error)
	CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error)
	AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, error)
	IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, error)
	ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) (*kmsg.ElectLeadersResponse, error)
	AlterPartitionReassignments(ctx context.Context, req *kmsg.AlterPartitionAssignmentsRequest) (*kmsg.AlterPartitionAssignmentsResponse, error)
	ListPartitionReassignments(ctx context.Context, req *kmsg.ListPartitionReassignmentsRequest) (*kmsg.ListPartitionReassignmentsResponse, error)
	DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error)
	AlterUserScramCredentials(ctx context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) (*kmsg.AlterUserSCRAMCredentialsResponse, error)
	CreateAcls(ctx context.Context, req *kmsg.CreateACLsRequest) (*kmsg.CreateACLsResponse, error)
	DeleteAcls(ctx context.Context, req *kmsg.DeleteACLsRequest) (*kmsg.DeleteACLsResponse, error)
	AlterClientQuotas(ctx context.Context, req *kmsg.AlterClientQuotasRequest) (*kmsg.AlterClientQuotasResponse, error)
}

// ProducerIDSource hands out producer ids from this node's block of ids,
// asking the controller for a new block when it is used up
// (*broker.ProducerIDManager).
type ProducerIDSource interface {
	NextProducerID(ctx context.Context) (int64, error)
}

// LogDirSource describes the node's log directories and the partition logs
// in them (DescribeLogDirs).
type LogDirSource interface {
	LogDirs() []LogDirDescription
}

// LogDirDescription is one log directory for DescribeLogDirs.
type LogDirDescription struct {
	Path string
	// Err is set when the directory is offline (KAFKA_STORAGE_ERROR).
	Err error
	// TotalBytes and UsableBytes are the file system's size and free space;
	// -1 when unknown.
	TotalBytes  int64
	UsableBytes int64
	Partitions  []LogDirPartition
}

// LogDirPartition is one partition log in a log directory.
type LogDirPartition struct {
	Topic     string
	Partition int32
	// Size is the total size of the log's segments in bytes.
	Size int64
	// OffsetLag is how far a future log is behind its current log.
	OffsetLag int64
	// IsFuture marks the future log of a move between log dirs.
	IsFuture bool
}

// ErrNotController is returned by a controller operation on a node that is
// not the active controller (NOT_CONTROLLER): the controller package's.
var ErrNotController = controller.ErrNotController

// ControllerErrorCode maps a controller operation's error onto the Kafka
// error code every result of the request gets: a deadline is Kafka's
// REQUEST_TIMED_OUT, a node that is not (or no longer) the controller is
// NOT_CONTROLLER, anything else (disk failure, shutdown) UNKNOWN_SERVER_ERROR.
func ControllerErrorCode(err error) int16 {
	var kerrErr *kerr.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return kerr.RequestTimedOut.Code
	case errors.Is(err, ErrNotController):
		return kerr.NotController.Code
	case errors.As(err, &kerrErr):
		return kerrErr.Code
	default:
		return kerr.UnknownServerError.Code
	}
}

// errorMessage is a response's error message for err, or nil.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// isInternalTopic reports whether Kafka marks a topic is_internal in Metadata.
func isInternalTopic(name string) bool {
	return name == "__consumer_offsets" || name == "__transaction_state"
}

// authorizedOperationsOmitted is Kafka's INT32_MIN: "not requested".
const authorizedOperationsOmitted int32 = -2147483648
