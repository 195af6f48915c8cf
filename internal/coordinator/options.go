package coordinator

import (
	"context"
	"log/slog"
	"time"

	"sluice/internal/clock"
	"sluice/internal/coordinator/group"
	"sluice/internal/metadata"
)

// OffsetsTopic is the name of the internal topic of group state.
const OffsetsTopic = "__consumer_offsets"

// PartitionWriter is a shard's access to its __consumer_offsets partition.
// The replica manager implements it through ReplicaWriter; tests use an
// in-memory log.
type PartitionWriter interface {
	// Append appends batch (one v2 batch, base offset 0) to the partition as
	// its leader and returns once the high watermark has passed it (acks=all),
	// with the offset of its last record. Waiting for the high watermark is
	// part of Append because the replica manager already parks acks=all
	// appends in its purgatory.
	Append(ctx context.Context, partition int32, batch []byte) (lastOffset int64, err error)
	// Read returns whole batches from offset (the log start if offset is
	// below it) up to the leader's log end offset, at most about maxBytes
	// but at least one batch, and the log end offset. A shard loads to the
	// log end, as Kafka's loader does, not to the high watermark: a new
	// leader's high watermark may lag its log for a moment, and every
	// record in the leader's log is either committed later or lost with
	// the leadership, which also stops the shard. It fails while this node
	// is not the partition's leader.
	Read(ctx context.Context, partition int32, offset int64, maxBytes int32) (batches []byte, logEndOffset int64, err error)
}

// TopicCreator creates the offsets topic (FindCoordinator creates it on
// first use, as Kafka does) through the controller.
type TopicCreator func(ctx context.Context, name string, partitions int32, replicationFactor int16, configs map[string]string) error

// Options configure a Coordinator.
type Options struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// Group holds the group settings (group.*.ms, offsets.retention...).
	Group group.Config
	// NumPartitions and ReplicationFactor are offsets.topic.num.partitions
	// and offsets.topic.replication.factor, used to create the topic; an
	// existing topic's own partition count decides the group mapping.
	NumPartitions     int32
	ReplicationFactor int16
	// SegmentBytes is offsets.topic.segment.bytes (0: Kafka's 100 MiB).
	SegmentBytes int64
	// Writer reaches the partitions.
	Writer PartitionWriter
	// Image returns the latest metadata image (leaders and endpoints).
	Image func() *metadata.Image
	// CreateTopic creates the offsets topic; nil never creates it.
	CreateTopic TopicCreator
	// Clock drives the state machines; nil is the real clock.
	Clock clock.Clock
	// TickInterval is how often a shard fires its timers (0: 100 ms).
	TickInterval time.Duration
	// WriteTimeout bounds one append's wait for the high watermark
	// (0: Kafka's offsets.commit.timeout.ms, 5 s).
	WriteTimeout time.Duration
	// MaxBatchBytes bounds a coalesced batch (0: 1 MiB).
	MaxBatchBytes int
	Logger        *slog.Logger
}

func (o *Options) withDefaults() {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.TickInterval <= 0 {
		o.TickInterval = 100 * time.Millisecond
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 5 * time.Second
	}
	if o.MaxBatchBytes <= 0 {
		o.MaxBatchBytes = 1 << 20
	}
	if o.NumPartitions <= 0 {
		o.NumPartitions = 50
	}
	if o.ReplicationFactor <= 0 {
		o.ReplicationFactor = 3
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 100 << 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Image == nil {
		o.Image = metadata.EmptyImage
	}
}
