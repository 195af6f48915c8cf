package replication

import (
	"math"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// TopicSettings is a topic's resolved configuration: what its partitions
// check on each append and what their logs run with.
type TopicSettings struct {
	Data TopicConfig
	Log  commitlog.Options
}

// DefaultTopicSettings are Kafka's defaults.
func DefaultTopicSettings() TopicSettings {
	return TopicSettings{Data: DefaultTopicConfig(), Log: commitlog.DefaultOptions()}
}

// TopicConfig is what the data plane needs of a topic's configuration. The
// broker resolves it from the topic's configs over its defaults once per
// change and pushes it (UpdateTopicSettings); each partition keeps its
// topic's, so an append reads it without a lookup and config changes apply
// without a restart.
type TopicConfig struct {
	// MinInsyncReplicas is min.insync.replicas, checked for acks=all.
	MinInsyncReplicas int
	// TimestampType is message.timestamp.type.
	TimestampType records.TimestampType
	// TimestampBeforeMaxMs and TimestampAfterMaxMs are
	// message.timestamp.before.max.ms and message.timestamp.after.max.ms.
	TimestampBeforeMaxMs int64
	TimestampAfterMaxMs  int64
	// Compact and Delete are the two values cleanup.policy may hold.
	Compact bool
	Delete  bool
	// MaxMessageBytes is max.message.bytes; SegmentBytes is segment.bytes.
	MaxMessageBytes int32
	SegmentBytes    int64
}

// DefaultTopicConfig returns Kafka's defaults.
func DefaultTopicConfig() TopicConfig {
	return TopicConfig{
		MinInsyncReplicas:    1,
		TimestampType:        records.CreateTime,
		TimestampBeforeMaxMs: math.MaxInt64,
		TimestampAfterMaxMs:  3600000,
		Delete:               true,
		MaxMessageBytes:      1048588,
		SegmentBytes:         1 << 30,
	}
}

// validateOptions turns the topic config into the rules of one produce append.
func (c TopicConfig) validateOptions(nowMs int64, produceVersion int16) records.ValidateOptions {
	return records.ValidateOptions{
		NowMs:                nowMs,
		TimestampType:        c.TimestampType,
		TimestampBeforeMaxMs: c.TimestampBeforeMaxMs,
		TimestampAfterMaxMs:  c.TimestampAfterMaxMs,
		Compacted:            c.Compact,
		MaxMessageBytes:      c.MaxMessageBytes,
		SegmentBytes:         c.SegmentBytes,
		ProduceVersion:       produceVersion,
	}
}
