package groupcoord

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// OffsetsTopic is the name of the internal topic of group state.
const OffsetsTopic = "__consumer_offsets"

// Options configure a GroupCoordinator.
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
	// Writer reaches the partitions of OffsetsTopic.
	Writer runtime.PartitionWriter
	// Image returns the latest metadata image (leaders and endpoints).
	Image func() *metadata.Image
	// CreateTopic creates the offsets topic; nil never creates it.
	CreateTopic runtime.TopicCreator
	// Clock drives the state machines and the shards' timers; nil is the
	// real clock.
	Clock clock.Clock
	// TickInterval is how often a shard fires its timers (0: 100 ms).
	TickInterval time.Duration
	// WriteTimeout bounds one append's wait for the high watermark
	// (0: Kafka's offsets.commit.timeout.ms, 5 s).
	WriteTimeout time.Duration
	// MaxBatchBytes bounds a coalesced batch (0: 1 MiB).
	MaxBatchBytes int
	// Verifier asks the transaction coordinator about a transactional
	// offset commit's offsets partition before it is written (nil: not
	// asked, as Kafka with transaction.partition.verification.enable=false).
	Verifier replication.TxnVerifier
	Logger   *slog.Logger
}

func (o *Options) withDefaults() {
	if o.NumPartitions <= 0 {
		o.NumPartitions = 50
	}
	if o.ReplicationFactor <= 0 {
		o.ReplicationFactor = 3
	}
	if o.SegmentBytes <= 0 {
		o.SegmentBytes = 100 << 20
	}
	if o.Image == nil {
		o.Image = metadata.EmptyImage
	}
}

// runtimeOptions are the runtime's options for the offsets topic.
func (o *Options) runtimeOptions(retired *retiredCounters) runtime.Options[*groupShard] {
	cfg := o.groupConfig()
	return runtime.Options[*groupShard]{
		Name: "group coordinator", Topic: OffsetsTopic, NodeID: o.NodeID,
		NewShard: func(_, _ int32, now time.Time) *groupShard {
			s := newGroupShard(cfg, now)
			s.retired = retired
			return s
		},
		NumPartitions:     o.NumPartitions,
		ReplicationFactor: o.ReplicationFactor,
		TopicConfigs: map[string]string{
			"cleanup.policy":   "compact",
			"compression.type": "producer",
			"segment.bytes":    fmt.Sprint(o.SegmentBytes),
		},
		Writer: o.Writer, Image: o.Image, CreateTopic: o.CreateTopic, Clock: o.Clock,
		TickInterval: o.TickInterval, WriteTimeout: o.WriteTimeout, MaxBatchBytes: o.MaxBatchBytes,
		Logger: o.Logger,
	}
}

// groupConfig is the group settings with the image's topics and group
// configs.
func (o *Options) groupConfig() group.Config {
	cfg := o.Group
	image := o.Image
	cfg.Topics = func() group.Topics { return imageTopics{image()} }
	cfg.GroupConfigs = func(id string) map[string]string { return image().GroupConfigs(id) }
	return cfg
}
