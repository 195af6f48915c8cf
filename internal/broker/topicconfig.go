package broker

// Topic configuration is pushed, not pulled: when metadata changes a
// topic's configs (or a dynamic broker default under every topic's), its
// effective configuration is resolved once, here, and handed to the replica
// manager, which gives it to the topic's partitions and their logs. An
// append reads its partition's settings; nothing resolves a config on the
// produce path.

import (
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/replication"
)

// TopicConfigTarget receives resolved topic settings (the replica manager).
type TopicConfigTarget interface {
	UpdateTopicSettings(settings map[string]replication.TopicSettings)
	ForgetTopicSettings(topics ...string)
}

// TopicConfigPublisher resolves topic configurations as metadata changes.
type TopicConfigPublisher struct {
	static *config.Config
	nodeID int32
	target TopicConfigTarget
	log    *slog.Logger
}

// NewTopicConfigPublisher resolves over the static configuration of node
// nodeID and pushes to target.
func NewTopicConfigPublisher(static *config.Config, target TopicConfigTarget, logger *slog.Logger) *TopicConfigPublisher {
	return &TopicConfigPublisher{static: static, nodeID: static.NodeID(), target: target, log: logger}
}

// Publish is the metadata subscriber: delta nil (or from an empty base)
// means every topic of image.
func (p *TopicConfigPublisher) Publish(delta *metadata.Delta, image *metadata.Image) {
	whole := delta == nil || delta.Base().Offset() < 0
	var topics []string
	if !whole {
		var removed []string
		for _, t := range delta.RemovedTopics() {
			removed = append(removed, t.Name)
		}
		p.target.ForgetTopicSettings(removed...)
		changed := map[string]bool{}
		for _, res := range delta.ChangedConfigs() {
			switch res.Type {
			case metadata.ConfigResourceTopic:
				changed[res.Name] = true
			case metadata.ConfigResourceBroker:
				whole = true // a default under every topic's configs changed
			}
		}
		for _, t := range delta.ChangedTopics() {
			if _, existed := delta.Base().TopicByID(t.ID); !existed {
				changed[t.Name] = true // created: its partitions need settings
			}
		}
		for name := range changed {
			topics = append(topics, name)
		}
	}
	if whole {
		topics = image.TopicNames()
	}
	if len(topics) == 0 {
		return
	}
	base := p.brokerConfig(image)
	settings := make(map[string]replication.TopicSettings, len(topics))
	for _, name := range topics {
		if _, ok := image.Topic(name); ok {
			settings[name] = p.resolve(base, image, name)
		}
	}
	p.target.UpdateTopicSettings(settings)
}

// resolve builds a topic's settings over the broker's defaults. Stored
// configs were validated by the controller, so a resolution error means
// this build refuses what an earlier one accepted: the defaults are used
// and the error logged.
func (p *TopicConfigPublisher) resolve(base *config.Config, im *metadata.Image, topic string) replication.TopicSettings {
	overrides := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: topic})
	t, err := base.ResolveTopic(overrides)
	if err != nil {
		p.log.Error("topic configs refused; using the broker defaults", "topic", topic, "err", err)
		t, _ = base.ResolveTopic(nil)
	}
	return TopicSettings(t)
}

// brokerConfig is the static configuration with the dynamic broker layers
// of the metadata log (per broker and cluster default) on top: the broker
// synonyms of topic keys (log.retention.ms...) can change at run time.
// Stored values were accepted by the controller; should this build refuse
// them, the static configuration is used.
func (p *TopicConfigPublisher) brokerConfig(im *metadata.Image) *config.Config {
	perBroker := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: strconv.Itoa(int(p.nodeID))})
	clusterDefault := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: ""})
	if len(perBroker) == 0 && len(clusterDefault) == 0 {
		return p.static
	}
	cfg, err := p.static.WithDynamic(perBroker, clusterDefault)
	if err != nil {
		return p.static
	}
	return cfg
}

// TopicSettings maps a topic's effective configuration onto what its
// partitions check on each append and what its logs run with.
func TopicSettings(t config.TopicConfig) replication.TopicSettings {
	return replication.TopicSettings{Data: dataPlaneConfig(t), Log: LogOptions(t)}
}

func dataPlaneConfig(t config.TopicConfig) replication.TopicConfig {
	tsType := records.CreateTime
	if strings.EqualFold(t.String(config.TopicMessageTimestampType), "LogAppendTime") {
		tsType = records.LogAppendTime
	}
	policy := t.List(config.TopicCleanupPolicy)
	return replication.TopicConfig{
		MinInsyncReplicas:    int(t.Int(config.TopicMinInsyncReplicas)),
		TimestampType:        tsType,
		TimestampBeforeMaxMs: t.Long(config.TopicMessageTimestampBeforeMaxMs),
		TimestampAfterMaxMs:  t.Long(config.TopicMessageTimestampAfterMaxMs),
		Compact:              slices.Contains(policy, "compact"),
		Delete:               slices.Contains(policy, "delete"),
		MaxMessageBytes:      t.Int(config.TopicMaxMessageBytes),
		SegmentBytes:         int64(t.Int(config.TopicSegmentBytes)),
	}
}

// LogOptions maps a topic's effective configuration onto its log's options.
func LogOptions(t config.TopicConfig) commitlog.Options {
	policy := t.List(config.TopicCleanupPolicy)
	return commitlog.Options{
		SegmentBytes:       int64(t.Int(config.TopicSegmentBytes)),
		SegmentMs:          Millis(t.Long(config.TopicSegmentMs)),
		SegmentJitterMs:    Millis(t.Long(config.TopicSegmentJitterMs)),
		SegmentIndexBytes:  int(t.Int(config.TopicSegmentIndexBytes)),
		IndexIntervalBytes: int(t.Int(config.TopicIndexIntervalBytes)),
		RetentionBytes:     t.Long(config.TopicRetentionBytes),
		RetentionMs:        Millis(t.Long(config.TopicRetentionMs)),
		FlushMessages:      t.Long(config.TopicFlushMessages),
		FlushMs:            Millis(t.Long(config.TopicFlushMs)),
		FileDeleteDelay:    Millis(t.Long(config.TopicFileDeleteDelayMs)),
		MaxMessageBytes:    int(t.Int(config.TopicMaxMessageBytes)),

		Compact:                slices.Contains(policy, "compact"),
		SkipRetention:          !slices.Contains(policy, "delete"),
		MinCleanableDirtyRatio: t.Double(config.TopicMinCleanableDirtyRatio),
		MinCompactionLag:       Millis(t.Long(config.TopicMinCompactionLagMs)),
		MaxCompactionLag:       Millis(t.Long(config.TopicMaxCompactionLagMs)),
		DeleteRetention:        Millis(t.Long(config.TopicDeleteRetentionMs)),
	}
}

// Millis converts a millisecond setting into a Duration, saturating:
// Kafka's "never" defaults are Long.MAX_VALUE milliseconds, beyond
// Duration's range.
func Millis(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	if ms < math.MinInt64/int64(time.Millisecond) {
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}
