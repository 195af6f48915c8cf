package sharecoord

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/share"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// ShareGroupStateTopic is the internal topic of share-group state.
const ShareGroupStateTopic = "__share_group_state"

// Options configure a ShareCoordinator.
type Options struct {
	// NodeID is this broker's node.id.
	NodeID int32
	// Share holds share.coordinator.snapshot.update.records.per.snapshot
	// and share.coordinator.cold.partition.snapshot.interval.ms; a nil
	// PartitionCount reads the image.
	Share share.Config
	// NumPartitions, ReplicationFactor, MinISR and SegmentBytes are
	// share.coordinator.state.topic.{num.partitions, replication.factor,
	// min.isr, segment.bytes} (0: Kafka's 50, 3, 2, 100 MiB), used to
	// create the topic; an existing topic's own partition count decides
	// the mapping of keys.
	NumPartitions     int32
	ReplicationFactor int16
	MinISR            int32
	SegmentBytes      int64
	// Writer reaches the partitions of ShareGroupStateTopic.
	Writer runtime.PartitionWriter
	// Image returns the latest metadata image.
	Image func() *metadata.Image
	// CreateTopic creates the topic; nil never creates it.
	CreateTopic runtime.TopicCreator
	// DeleteRecords raises a partition's log start offset to beforeOffset
	// (the replica manager's DeleteRecords as the partition's leader); nil
	// never prunes the topic, which then grows without bound
	// (cleanup.policy is delete with retention.ms -1, as in Kafka).
	DeleteRecords func(ctx context.Context, partition int32, beforeOffset int64) error
	// PruneInterval is share.coordinator.state.topic.prune.interval.ms
	// (0: Kafka's 5 minutes).
	PruneInterval time.Duration
	// Clock drives the state machines and the shards' timers; nil is the
	// real clock.
	Clock clock.Clock
	// TickInterval is the shards' timer granularity (0: 100 ms).
	TickInterval time.Duration
	// WriteTimeout bounds one append's wait for the high watermark
	// (share.coordinator.write.timeout.ms; 0: 5 s).
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

func (o *Options) withDefaults() {
	if o.NumPartitions <= 0 {
		o.NumPartitions = 50
	}
	if o.ReplicationFactor <= 0 {
		o.ReplicationFactor = 3
	}
	if o.MinISR <= 0 {
		o.MinISR = 2
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 100 << 20
	}
	if o.Image == nil {
		o.Image = metadata.EmptyImage
	}
	if o.PruneInterval <= 0 {
		o.PruneInterval = 5 * time.Minute
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Share.PartitionCount == nil {
		image := o.Image
		o.Share.PartitionCount = func(id kafka.UUID) (int32, bool) {
			t, ok := image().TopicByID(id)
			if !ok {
				return 0, false
			}
			return int32(len(t.Partitions)), true
		}
	}
}

// TopicConfigs are Kafka's ShareCoordinatorService.shareGroupStateTopicConfigs
// (min.insync.replicas is added, capped, at creation).
func (o *Options) TopicConfigs() map[string]string {
	return map[string]string{
		"cleanup.policy":   "delete",
		"compression.type": "producer",
		"segment.bytes":    strconv.FormatInt(o.SegmentBytes, 10),
		"retention.ms":     "-1",
	}
}

func (o *Options) runtimeOptions(newShard func(partition, epoch int32, now time.Time) *shareShard) runtime.Options[*shareShard] {
	return runtime.Options[*shareShard]{
		Name: "share coordinator", Topic: ShareGroupStateTopic, NodeID: o.NodeID, NewShard: newShard,
		NumPartitions: o.NumPartitions, ReplicationFactor: o.ReplicationFactor, TopicConfigs: o.TopicConfigs(),
		Writer: o.Writer, Image: o.Image, CreateTopic: o.cappedCreator(), Clock: o.Clock,
		TickInterval: o.TickInterval, WriteTimeout: o.WriteTimeout, Logger: o.Logger,
	}
}

// cappedCreator creates the topic with the replication factor capped at
// the unfenced brokers and min.insync.replicas (min.isr) capped at that
// factor, as the transaction coordinator does, so that a small cluster can
// write to it.
func (o *Options) cappedCreator() runtime.TopicCreator {
	if o.CreateTopic == nil {
		return nil
	}
	return func(ctx context.Context, name string, partitions int32, rf int16, configs map[string]string) error {
		if live := unfencedBrokers(o.Image()); live > 0 && int(rf) > live {
			rf = int16(live)
		}
		withISR := maps.Clone(configs)
		withISR["min.insync.replicas"] = strconv.Itoa(int(min(o.MinISR, int32(rf))))
		if err := o.CreateTopic(ctx, name, partitions, rf, withISR); err != nil {
			return fmt.Errorf("replication factor %d: %w", rf, err)
		}
		return nil
	}
}

func unfencedBrokers(im *metadata.Image) int {
	n := 0
	for _, id := range im.BrokerIDs() {
		if b, ok := im.Broker(id); ok && !b.Fenced {
			n++
		}
	}
	return n
}
