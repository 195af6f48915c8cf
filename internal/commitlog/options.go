package commitlog

import "time"

// Options are the per-log settings, Kafka's topic configs (with the broker's
// log.* keys as defaults). They can change while the log is open (SetOptions),
// as topic configs change without a restart.
type Options struct {
	// SegmentBytes is segment.bytes: a segment is rolled before it would exceed it.
	SegmentBytes int64
	// SegmentMs is segment.ms: a segment whose first batch is older than this is rolled.
	SegmentMs time.Duration
	// SegmentJitterMs is segment.jitter.ms: a random amount up to it is
	// subtracted from SegmentMs for each segment, so logs do not all roll at once.
	SegmentJitterMs time.Duration
	// SegmentIndexBytes is segment.index.bytes, the largest size of each index.
	SegmentIndexBytes int
	// IndexIntervalBytes is index.interval.bytes, the log bytes between offset index entries.
	IndexIntervalBytes int
	// RetentionBytes is retention.bytes; negative means unlimited.
	RetentionBytes int64
	// RetentionMs is retention.ms; negative means unlimited.
	RetentionMs time.Duration
	// FlushMessages is flush.messages: fsync after this many appended
	// messages; 0 or less, or the maximum int64, means never (Kafka's default).
	FlushMessages int64
	// FlushMs is flush.ms: fsync when the last flush is older than this;
	// 0 or less, or very large, means never (Kafka's default).
	FlushMs time.Duration
	// FileDeleteDelay is file.delete.delay.ms: how long a deleted segment's
	// files stay (renamed .deleted) so readers holding them finish.
	FileDeleteDelay time.Duration
	// MaxMessageBytes is max.message.bytes, the largest batch accepted.
	MaxMessageBytes int

	// Compact says cleanup.policy holds "compact": the log cleaner keeps
	// the latest record of each key (package commitlog/cleaner).
	Compact bool
	// SkipRetention says cleanup.policy lacks "delete" (compact only, or
	// empty): retention.ms and retention.bytes delete nothing, as in Kafka.
	// The zero value keeps Kafka's default policy, delete.
	SkipRetention bool
	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio: the cleaner
	// takes a log once this share of its cleanable bytes is uncleaned.
	MinCleanableDirtyRatio float64
	// MinCompactionLag is min.compaction.lag.ms: records younger than this
	// are not cleaned.
	MinCompactionLag time.Duration
	// MaxCompactionLag is max.compaction.lag.ms: a log whose oldest
	// uncleaned record is older than this is cleaned whatever its dirty
	// ratio; 0 or less means never.
	MaxCompactionLag time.Duration
	// DeleteRetention is delete.retention.ms: how long a tombstone (and a
	// transaction marker) survives after the cleaner first sees it.
	DeleteRetention time.Duration
}

// DefaultOptions returns Kafka's defaults.
func DefaultOptions() Options {
	return Options{
		SegmentBytes:       1 << 30,
		SegmentMs:          7 * 24 * time.Hour,
		SegmentJitterMs:    0,
		SegmentIndexBytes:  10 << 20,
		IndexIntervalBytes: 4096,
		RetentionBytes:     -1,
		RetentionMs:        7 * 24 * time.Hour,
		FlushMessages:      1<<63 - 1,
		FlushMs:            1<<63 - 1,
		FileDeleteDelay:    time.Minute,
		MaxMessageBytes:    1048588,

		MinCleanableDirtyRatio: 0.5,
		MinCompactionLag:       0,
		MaxCompactionLag:       1<<63 - 1,
		DeleteRetention:        24 * time.Hour,
	}
}

// normalized fills nonsensical values with the smallest workable ones, so a
// bad config cannot make the log misbehave (config validation reports them).
func (o Options) normalized() Options {
	if o.SegmentBytes < 14 {
		o.SegmentBytes = 14
	}
	if o.SegmentIndexBytes < timeIndexEntrySize*2 {
		o.SegmentIndexBytes = timeIndexEntrySize * 2
	}
	if o.IndexIntervalBytes < 0 {
		o.IndexIntervalBytes = 0
	}
	if o.SegmentMs <= 0 {
		o.SegmentMs = 1<<63 - 1
	}
	return o
}

// maxSegmentMs is the age that rolls a segment: segment.ms or, on a
// compacted log, max.compaction.lag.ms when smaller, so dirty records leave
// the active segment (never cleaned) in time (Kafka's maxSegmentMs).
func (o Options) maxSegmentMs() time.Duration {
	if o.Compact && o.MaxCompactionLag > 0 && o.MaxCompactionLag < o.SegmentMs {
		return o.MaxCompactionLag
	}
	return o.SegmentMs
}

func (o Options) flushMessagesEnabled() bool {
	return o.FlushMessages > 0 && o.FlushMessages < 1<<63-1
}

func (o Options) flushMsEnabled() bool {
	return o.FlushMs > 0 && o.FlushMs < 1<<62
}
