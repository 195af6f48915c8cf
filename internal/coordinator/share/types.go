package share

import (
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Config holds the settings that shape the share coordinator, under
// Kafka's names.
type Config struct {
	// SnapshotUpdateRecordsPerSnapshot is
	// share.coordinator.snapshot.update.records.per.snapshot: a write
	// after that many updates of a share partition writes a snapshot.
	SnapshotUpdateRecordsPerSnapshot int
	// ColdPartitionSnapshotInterval is
	// share.coordinator.cold.partition.snapshot.interval.ms: how often
	// share partitions whose last snapshot is older than that are
	// snapshotted again (0 never).
	ColdPartitionSnapshotInterval time.Duration
	// PartitionCount returns a topic's partition count from the latest
	// metadata image, false when the topic is unknown; operations on an
	// unknown topic or partition answer UNKNOWN_TOPIC_OR_PARTITION. nil
	// knows no topic (Kafka's answer while it has no image).
	PartitionCount func(topicID kafka.UUID) (int32, bool)
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{SnapshotUpdateRecordsPerSnapshot: 500, ColdPartitionSnapshotInterval: 5 * time.Minute}
}

// Offset is a share partition's state (Kafka's ShareGroupOffset).
type Offset struct {
	SnapshotEpoch, StateEpoch, LeaderEpoch int32
	StartOffset                            int64
	// DeliveryCompleteCount is -1 when unknown (KIP-1226).
	DeliveryCompleteCount           int32
	CreateTimestamp, WriteTimestamp int64
	// StateBatches are sorted, never overlap and are never changed in
	// place: a new state gets new slices.
	StateBatches []StateBatch
}

// Record is one record of __share_group_state; a nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

// Write is records to append together, and what to run once they are
// durable or have failed (on the Manager's goroutine).
type Write struct {
	Records []Record
	Done    func(err error)
}

// InitializeRequest is one partition of an InitializeShareGroupState.
type InitializeRequest struct {
	Key         Key
	StateEpoch  int32
	StartOffset int64
}

// WriteRequest is one partition of a WriteShareGroupState.
type WriteRequest struct {
	Key                     Key
	StateEpoch, LeaderEpoch int32
	// StartOffset is -1 when the write does not move it.
	StartOffset int64
	// DeliveryCompleteCount is -1 when unknown (v0 requests).
	DeliveryCompleteCount int32
	StateBatches          []StateBatch
}

// ReadRequest is one partition of a ReadShareGroupState or a
// ReadShareGroupStateSummary.
type ReadRequest struct {
	Key         Key
	LeaderEpoch int32
}

// Result is a partition's answer to Initialize, Write and Delete.
type Result struct {
	ErrorCode    int16
	ErrorMessage *string
}

// ReadResult is a partition's answer to Read.
type ReadResult struct {
	Result
	StateEpoch   int32
	StartOffset  int64
	StateBatches []StateBatch
}

// SummaryResult is a partition's answer to ReadSummary.
type SummaryResult struct {
	Result
	StateEpoch, LeaderEpoch int32
	StartOffset             int64
	DeliveryCompleteCount   int32
}
