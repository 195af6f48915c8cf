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
	policy := t.List("cleanup.policy")
	return commitlog.Options{
		SegmentBytes:       int64(t.Int("segment.bytes")),
		SegmentMs:          millis(t.Long("segment.ms")),
		SegmentJitterMs:    millis(t.Long("segment.jitter.ms")),
		SegmentIndexBytes:  int(t.Int("segment.index.bytes")),
		IndexIntervalBytes: int(t.Int("index.interval.bytes")),
		RetentionBytes:     t.Long("retention.bytes"),
		RetentionMs:        millis(t.Long("retention.ms")),
		FlushMessages:      t.Long("flush.messages"),
		FlushMs:            millis(t.Long("flush.ms")),
		FileDeleteDelay:    millis(t.Long("file.delete.delay.ms")),
		MaxMessageBytes:    int(t.Int("max.message.bytes")),

		Compact:                slices.Contains(policy, "compact"),
		SkipRetention:          !slices.Contains(policy, "delete"),
		MinCleanableDirtyRatio: t.Double("min.cleanable.dirty.ratio"),
		MinCompactionLag:       millis(t.Long("min.compaction.lag.ms")),
		MaxCompactionLag:       millis(t.Long("max.compaction.lag.ms")),
		DeleteRetention:        millis(t.Long("delete.retention.ms")),
	}
}

// cleanerOptions maps the broker's log.cleaner.* settings onto the cleaner's.
func cleanerOptions(cfg *config.Config) cleaner.Options {
	return cleaner.Options{
		Threads:                int(cfg.Int("log.cleaner.threads")),
		DedupeBufferSize:       cfg.Long("log.cleaner.dedupe.buffer.size"),
		DedupeBufferLoadFactor: cfg.Double("log.cleaner.io.buffer.load.factor"),
		IOBufferSize:           int(cfg.Int("log.cleaner.io.buffer.size")),
		Backoff:                millis(cfg.Long("log.cleaner.backoff.ms")),
	}
}

// dataPlaneTopicConfig maps a topic's effective configuration onto what the
// replica manager checks on each append.
func dataPlaneTopicConfig(t config.TopicConfig) replication.TopicConfig {
	tsType := records.CreateTime
	if strings.EqualFold(t.String("message.timestamp.type"), "LogAppendTime") {
		tsType = records.LogAppendTime
	}
	policy := t.List("cleanup.policy")
	return replication.TopicConfig{
		MinInsyncReplicas:    int(t.Int("min.insync.replicas")),
		TimestampType:        tsType,
		TimestampBeforeMaxMs: t.Long("message.timestamp.before.max.ms"),
		TimestampAfterMaxMs:  t.Long("message.timestamp.after.max.ms"),
		Compact:              slices.Contains(policy, "compact"),
		Delete:               slices.Contains(policy, "delete"),
		MaxMessageBytes:      t.Int("max.message.bytes"),
		SegmentBytes:         int64(t.Int("segment.bytes")),
	}
}

// managerOptions maps the broker's log settings onto the log manager's.
func managerOptions(cfg *config.Config, defaults commitlog.Options) commitlog.ManagerOptions {
	return commitlog.ManagerOptions{
		Dirs:                              cfg.LogDirs(),
		Defaults:                          defaults,
		RetentionCheckInterval:            millis(cfg.Long("log.retention.check.interval.ms")),
		FlushCheckInterval:                millis(cfg.Long("log.flush.scheduler.interval.ms")),
		RecoveryPointCheckpointInterval:   millis(cfg.Long("log.flush.offset.checkpoint.interval.ms")),
		LogStartCheckpointInterval:        millis(cfg.Long("log.flush.start.offset.checkpoint.interval.ms")),
		ProducerIDExpiration:              millis(cfg.Long("producer.id.expiration.ms")),
		ProducerIDExpirationCheckInterval: millis(cfg.Long("producer.id.expiration.check.interval.ms")),
		DeleteCheckInterval:               time.Second,
	}
}

// metadataLogDir is metadata.log.dir, or the first log dir, as in Kafka.
func metadataLogDir(cfg *config.Config) string {
	if cfg.IsSet("metadata.log.dir") {
		return cfg.String("metadata.log.dir")
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
