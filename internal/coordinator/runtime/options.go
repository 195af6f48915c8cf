package runtime

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Shard is the state machine of one partition of the internal topic. One
// event loop owns it: no method is called concurrently with another.
type Shard interface {
	// Replay applies one record read from the partition while loading, at
	// offset, from batch; a transaction marker comes as one call with
	// batch.Control set and no key or value. An error skips the record (it
	// is logged): refusing to load would keep everything the partition
	// holds unavailable.
	Replay(now time.Time, batch ReplayBatch, offset int64, key, value []byte) error
	// Loaded ends the load, after which operations run. It returns
	// key-value pairs describing what was loaded, for the log.
	Loaded(now time.Time) []any
	// Tick fires the timers due at now. The loop calls it after each round
	// of operations and when NextTick has passed.
	Tick(now time.Time)
	// NextTick is how long the loop may sleep when no operation comes;
	// tickInterval is the runtime's timer granularity.
	NextTick(tickInterval time.Duration) time.Duration
	// TakeWrites returns the writes emitted since the last call, in order.
	TakeWrites() []Write
	// Shutdown answers every waiting request with code (NOT_COORDINATOR):
	// the partition has moved or the runtime closes. The Shard is not used
	// afterwards.
	Shutdown(code int16)
}

// ReplayBatch is what a Shard learns of the batch a replayed record comes
// from: Kafka's loader passes the batch's producer to replay and hands
// transaction markers to replayEndTransactionMarker.
type ReplayBatch struct {
	// ProducerID and ProducerEpoch are the batch's producer
	// (kafka.NoProducerID for the runtime's own plain writes).
	ProducerID    int64
	ProducerEpoch int16
	// Transactional marks a batch of a producer's transaction: its records
	// take effect at the producer's next marker, and only if it commits.
	Transactional bool
	// Control marks a transaction marker (a control batch); Commit is its
	// result, commit or abort.
	Control bool
	Commit  bool
}

// Record is one record of the internal topic; a nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

// Producer is the producer of a transactional write.
type Producer struct {
	ID    int64
	Epoch int16
}

// Write is records to append together, and what to run on the shard's
// loop once they are durable or have failed.
type Write struct {
	Records []Record
	// Transaction, when set, appends Records as a transactional batch of
	// that producer (Kafka's transactional write operation), in a batch of
	// its own: the producer's marker on the partition later commits or
	// aborts them.
	Transaction *Producer
	// Done may be nil. Its error is a *kerr.Error where one applies:
	// NOT_COORDINATOR once the shard stopped, REQUEST_TIMED_OUT when the
	// high watermark did not pass the write in time.
	Done func(err error)
}

// PartitionWriter is a shard's access to its partition. The replica manager
// implements it through ReplicaWriter; tests use an in-memory log.
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

// TopicCreator creates the internal topic (the first lookup of a
// coordinator creates it, as Kafka does) through the controller.
type TopicCreator func(ctx context.Context, name string, partitions int32, replicationFactor int16, configs map[string]string) error

// Options configure a Runtime.
type Options[S Shard] struct {
	// Name names the coordinator in logs ("group coordinator").
	Name string
	// Topic is the internal topic whose partitions the shards own.
	Topic string
	// NodeID is this broker's node.id.
	NodeID int32
	// NewShard returns the empty state machine of a partition led at
	// leaderEpoch (the transaction coordinator's markers carry it as their
	// coordinator epoch); a load that fails and is retried starts again
	// from a new one.
	NewShard func(partition, leaderEpoch int32, now time.Time) S
	// NumPartitions, ReplicationFactor and TopicConfigs create the topic;
	// an existing topic's own partition count decides the mapping of keys.
	NumPartitions     int32
	ReplicationFactor int16
	TopicConfigs      map[string]string
	// Writer reaches the partitions.
	Writer PartitionWriter
	// Image returns the latest metadata image (leaders and endpoints).
	Image func() *metadata.Image
	// CreateTopic creates the topic; nil never creates it.
	CreateTopic TopicCreator
	// Clock drives the state machines and the shards' timers; nil is the
	// real clock.
	Clock clock.Clock
	// TickInterval is how often a shard fires its timers (0: 100 ms).
	TickInterval time.Duration
	// WriteTimeout bounds one append's wait for the high watermark (0: 5 s).
	WriteTimeout time.Duration
	// MaxBatchBytes bounds a coalesced batch (0: 1 MiB).
	MaxBatchBytes int
	Logger        *slog.Logger
}

func (o *Options[S]) validate() error {
	switch {
	case o.Topic == "":
		return errors.New("no topic")
	case o.NewShard == nil:
		return errors.New("no NewShard")
	case o.Writer == nil:
		return errors.New("no PartitionWriter")
	case o.NumPartitions <= 0 || o.ReplicationFactor <= 0:
		return errors.New("no partition count or replication factor for the topic")
	}
	return nil
}

func (o *Options[S]) withDefaults() {
	if o.Name == "" {
		o.Name = "coordinator"
	}
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
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Image == nil {
		o.Image = metadata.EmptyImage
	}
}
