package node

// This file maps the configuration onto each package's own Options: only the
// node (and config) see the whole configuration.

import (
	"math"
	"slices"
	"strings"
	"time"

	"sluice/internal/commitlog"
	"sluice/internal/commitlog/cleaner"
	"sluice/internal/config"
	"sluice/internal/records"
	"sluice/internal/replication"
)

// millis converts a millisecond setting into a Duration, saturating: Kafka's
// "never" defaults are Long.MAX_VALUE milliseconds, beyond Duration's range.
func millis(ms int64) time.Duration {
	if ms > math.MaxInt64/int64(time.Millisecond) {
		return math.MaxInt64
	}
	if ms < math.MinInt64/int64(time.Millisecond) {
		return math.MinInt64
	}
	return time.Duration(ms) * time.Millisecond
}

// logOptions maps a topic's effective configuration onto its log's options.
func logOptions(t config.TopicConfig) commitlog.Options {
	policy := t.List(config.TopicCleanupPolicy)
	return commitlog.Options{
		SegmentBytes:       int64(t.Int(config.TopicSegmentBytes)),
		SegmentMs:          millis(t.Long(config.TopicSegmentMs)),
		SegmentJitterMs:    millis(t.Long(config.TopicSegmentJitterMs)),
		SegmentIndexBytes:  int(t.Int(config.TopicSegmentIndexBytes)),
		IndexIntervalBytes: int(t.Int(config.TopicIndexIntervalBytes)),
		RetentionBytes:     t.Long(config.TopicRetentionBytes),
		RetentionMs:        millis(t.Long(config.TopicRetentionMs)),
		FlushMessages:      t.Long(config.TopicFlushMessages),
		FlushMs:            millis(t.Long(config.TopicFlushMs)),
		FileDeleteDelay:    millis(t.Long(config.TopicFileDeleteDelayMs)),
		MaxMessageBytes:    int(t.Int(config.TopicMaxMessageBytes)),

		Compact:                slices.Contains(policy, "compact"),
		SkipRetention:          !slices.Contains(policy, "delete"),
		MinCleanableDirtyRatio: t.Double(config.TopicMinCleanableDirtyRatio),
		MinCompactionLag:       millis(t.Long(config.TopicMinCompactionLagMs)),
		MaxCompactionLag:       millis(t.Long(config.TopicMaxCompactionLagMs)),
		DeleteRetention:        millis(t.Long(config.TopicDeleteRetentionMs)),
	}
}

// cleanerOptions maps the broker's log.cleaner.* settings onto the cleaner's.
func cleanerOptions(cfg *config.Config) cleaner.Options {
	return cleaner.Options{
		Threads:                int(cfg.Int(config.LogCleanerThreads)),
		DedupeBufferSize:       cfg.Long(config.LogCleanerDedupeBufferSize),
		DedupeBufferLoadFactor: cfg.Double(config.LogCleanerIOBufferLoadFactor),
		IOBufferSize:           int(cfg.Int(config.LogCleanerIOBufferSize)),
		Backoff:                millis(cfg.Long(config.LogCleanerBackoffMs)),
	}
}

// dataPlaneTopicConfig maps a topic's effective configuration onto what the
// replica manager checks on each append.
func dataPlaneTopicConfig(t config.TopicConfig) replication.TopicConfig {
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

// managerOptions maps the broker's log settings onto the log manager's.
func managerOptions(cfg *config.Config, defaults commitlog.Options) commitlog.ManagerOptions {
	return commitlog.ManagerOptions{
		Dirs:                              cfg.LogDirs(),
		Defaults:                          defaults,
		RetentionCheckInterval:            millis(cfg.Long(config.LogRetentionCheckIntervalMs)),
		FlushCheckInterval:                millis(cfg.Long(config.LogFlushSchedulerIntervalMs)),
		RecoveryPointCheckpointInterval:   millis(int64(cfg.Int(config.LogFlushOffsetCheckpointIntervalMs))),
		LogStartCheckpointInterval:        millis(int64(cfg.Int(config.LogFlushStartOffsetCheckpointIntervalMs))),
		ProducerIDExpiration:              millis(int64(cfg.Int(config.ProducerIDExpirationMs))),
		ProducerIDExpirationCheckInterval: millis(int64(cfg.Int(config.ProducerIDExpirationCheckIntervalMs))),
		DeleteCheckInterval:               time.Second,
	}
}

// metadataLogDir is metadata.log.dir, or the first log dir, as in Kafka.
func metadataLogDir(cfg *config.Config) string {
	if cfg.IsSet(config.MetadataLogDir) {
		return cfg.String(config.MetadataLogDir)
	}
	return cfg.LogDirs()[0]
}

// securityProtocolID is Kafka's SecurityProtocol id of a protocol name.
func securityProtocolID(name string) int16 {
	switch strings.ToUpper(name) {
	case "SSL":
		return 1
	case "SASL_PLAINTEXT":
		return 2
	case "SASL_SSL":
		return 3
	default:
		return 0
	}
}
