package api

// The control-plane handlers (Metadata, CreateTopics, DeleteTopics,
// CreatePartitions, DescribeConfigs, AlterConfigs, IncrementalAlterConfigs,
// DescribeCluster, DescribeLogDirs, InitProducerId) reach the node through the
// ControlPlane interface below, which internal/node implements. Controller
// operations go through it rather than calling internal/controller directly
// because a response may only be sent once its records are committed and
// replayed (apply-on-commit): the node owns the quorum and the one controller
// event loop that orders operations.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/config"
	"sluice/internal/controller"
	"sluice/internal/metadata"
)

// ControlPlane is the node as the control-plane handlers see it.
type ControlPlane interface {
	// NodeID is this node's node.id.
	NodeID() int32
	// Config is the broker's static configuration (file and overrides).
	Config() *config.Config
	// Image is the latest published metadata image.
	Image() *metadata.Image

	// The controller operations below are computed by the active controller
	// against the latest image, proposed through the quorum and answered once
	// committed and applied to Image. An error means the operation did not
	// run to completion (see ControlPlaneErrorCode).
	CreateTopics(ctx context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error)
	DeleteTopics(ctx context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error)
	CreatePartitions(ctx context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error)
	AlterConfigs(ctx context.Context, req *kmsg.AlterConfigsRequest) (*kmsg.AlterConfigsResponse, error)
	IncrementalAlterConfigs(ctx context.Context, req *kmsg.IncrementalAlterConfigsRequest) (*kmsg.IncrementalAlterConfigsResponse, error)

	// NextProducerID hands out one producer id from this broker's block of
	// ids, asking the controller for a new block when it is used up.
	NextProducerID(ctx context.Context) (int64, error)

	// LogDirs describes the node's log directories and the partition logs
	// in them (DescribeLogDirs).
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
	// OffsetLag is how far a future log is behind; always 0 without
	// JBOD moves.
	OffsetLag int64
}

// ErrNotController is returned by a ControlPlane operation on a node that is
// not the active controller (NOT_CONTROLLER): the controller package's.
var ErrNotController = controller.ErrNotController

// ControlPlaneErrorCode maps a ControlPlane operation error onto the Kafka
// error code every result of the request gets: a deadline is Kafka's
// REQUEST_TIMED_OUT, a node that is not (or no longer) the controller is
// NOT_CONTROLLER, anything else (disk failure, shutdown) UNKNOWN_SERVER_ERROR.
func ControlPlaneErrorCode(err error) int16 {
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
