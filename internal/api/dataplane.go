package api

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// DataPlane is what the Produce, Fetch, ListOffsets, DeleteRecords,
// OffsetForLeaderEpoch and DescribeProducers handlers need of the broker's
// partitions.
// *replication.ReplicaManager implements it; errors carry Kafka codes
// (replication.ErrorCode maps them).
type DataPlane interface {
	// TopicID and TopicName translate between names and ids (v13+ requests)
	// for topics the metadata knows.
	TopicID(name string) (kafka.UUID, bool)
	TopicName(id kafka.UUID) (string, bool)
	// AppendRecords appends produced batches, waiting for acks=all.
	AppendRecords(ctx context.Context, req replication.AppendRequest) []replication.PartitionAppendResult
	// Fetch reads, long-polling up to params.MaxWait for params.MinBytes.
	Fetch(ctx context.Context, params replication.FetchParams, parts []replication.FetchPartition) []replication.FetchPartitionResult
	ListOffset(tp kafka.TopicPartition, timestamp int64, iso replication.Isolation, currentLeaderEpoch int32, isClient bool) (replication.OffsetAnswer, error)
	DeleteRecords(tp kafka.TopicPartition, offset int64) (int64, error)
	EndOffsetForEpoch(tp kafka.TopicPartition, currentLeaderEpoch, leaderEpoch int32, requireLeader bool) (replication.EpochEndOffset, error)
	// ActiveProducers lists a hosted partition's producers (DescribeProducers).
	ActiveProducers(tp kafka.TopicPartition) ([]replication.ProducerState, error)
}

var _ DataPlane = (*replication.ReplicaManager)(nil)

// errorCode is the Kafka error code of a data-plane error (0 for nil).
func errorCode(err error) int16 { return replication.ErrorCode(err) }

// DataPlaneDeps is what the data-plane handlers need (BrokerDeps.Data).
type DataPlaneDeps struct {
	// Partitions is the broker's replica manager; nil leaves the data-plane
	// APIs unregistered.
	Partitions DataPlane
	// FetchSessionCacheSlots is max.incremental.fetch.session.cache.slots
	// (Kafka's default is 1000); 0 disables incremental fetch sessions, as
	// in Kafka.
	FetchSessionCacheSlots int
	// FetchSessionEviction is min.incremental.fetch.session.eviction.ms
	// (0: Kafka's 120 s).
	FetchSessionEviction time.Duration
	// FetchMaxBytes is fetch.max.bytes (0: Kafka's 55 MiB).
	FetchMaxBytes int32
	// Clock times fetch sessions; nil is the real clock.
	Clock clock.Clock
	// Markers writes transaction markers (WriteTxnMarkers); nil leaves the
	// API out.
	Markers TxnMarkerWriter
}

func (d *DataPlaneDeps) clock() clock.Clock {
	if d.Clock == nil {
		return clock.Real{}
	}
	return d.Clock
}
