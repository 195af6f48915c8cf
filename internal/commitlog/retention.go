package commitlog

import (
	"fmt"
	"time"
)

// IncrementLogStartOffset raises the log start offset (DeleteRecords, or a
// follower following the leader's) and deletes the segments wholly below it.
// It may not pass the high watermark (or the log end offset without one).
func (l *Log) IncrementLogStartOffset(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return err
	}
	if bound := l.retentionBoundLocked(); offset > bound {
		return fmt.Errorf("%w: new log start offset %d above the high watermark %d of %s", ErrOffsetOutOfRange, offset, bound, l.tp)
	}
	if offset <= l.mu.logStartOffset {
		return nil
	}
	l.mu.logStartOffset = offset
	l.mu.producers.OnLogStartOffsetIncremented(offset)
	if err := l.mu.epochs.TruncateFromStart(offset); err != nil {
		return l.ioFailure("truncate leader epoch cache", err)
	}
	_, err := l.deleteSegmentsLocked(func(s *segment, next int64) bool { return next <= offset }, "log start offset")
	return err
}

// retentionBoundLocked is the offset below which data may be deleted.
func (l *Log) retentionBoundLocked() int64 {
	leo := l.activeLocked().nextOffset
	if l.mu.highWatermark < 0 || l.mu.highWatermark > leo {
		return leo
	}
	return l.mu.highWatermark
}

// ApplyRetention deletes the oldest segments that breach retention.ms or
// retention.bytes, or lie below the log start offset, never passing the
// high watermark; the Manager's retention scheduler calls it. An active
// segment that alone breaches retention is rolled first, as Kafka does.
func (l *Log) ApplyRetention(now time.Time) (deleted int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return 0, err
	}
	opts := l.mu.opts
	start := l.mu.logStartOffset
	n, err := l.deleteSegmentsLocked(func(s *segment, next int64) bool { return next <= start }, "log start offset")
	deleted += n
	if err != nil {
		return deleted, err
	}
	if opts.SkipRetention {
		// cleanup.policy without delete: only the log start offset removes data.
		return deleted, nil
	}
	if opts.RetentionMs >= 0 {
		cutoff := now.Add(-opts.RetentionMs).UnixMilli()
		n, err = l.deleteSegmentsLocked(func(s *segment, _ int64) bool {
			return s.maxTimestamp >= 0 && s.maxTimestamp < cutoff || s.maxTimestamp < 0 && now.Sub(s.created) > opts.RetentionMs
		}, "retention.ms")
		deleted += n
		if err != nil {
			return deleted, err
		}
	}
	if opts.RetentionBytes >= 0 {
		var total int64
		for _, s := range l.mu.segments {
			total += s.size.Load()
		}
		excess := total - opts.RetentionBytes
		n, err = l.deleteSegmentsLocked(func(s *segment, _ int64) bool {
			if excess-s.size.Load() < 0 {
				return false
			}
			excess -= s.size.Load()
			return true
		}, "retention.bytes")
		deleted += n
	}
	return deleted, err
}

// deleteSegmentsLocked deletes the longest prefix of segments for which
// shouldDelete(segment, next segment's base or the log end offset) holds,
// skipping an empty active segment and anything above the high watermark.
// When every segment goes, a new empty active segment is rolled first.
func (l *Log) deleteSegmentsLocked(shouldDelete func(s *segment, next int64) bool, reason string) (int, error) {
	bound := l.retentionBoundLocked()
	segs := l.mu.segments
	n := 0
	for n < len(segs) {
		s := segs[n]
		last := n+1 == len(segs)
		next := s.nextOffset
		if !last {
			next = segs[n+1].baseOffset
		}
		if last && s.size.Load() == 0 || next > bound || !shouldDelete(s, next) {
			break
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if n == len(segs) {
		if _, err := l.rollLocked(l.activeLocked().nextOffset); err != nil {
			return 0, err
		}
		segs = l.mu.segments
	}
	for _, s := range segs[:n] {
		if err := l.scheduleDeleteLocked(s); err != nil {
			return 0, err
		}
	}
	rest := make([]*segment, len(segs)-n)
	copy(rest, segs[n:])
	l.mu.segments = rest
	if first := rest[0].baseOffset; first > l.mu.logStartOffset {
		l.mu.logStartOffset = first
	}
	if l.mu.recoveryPoint < l.mu.logStartOffset {
		l.mu.recoveryPoint = l.mu.logStartOffset
	}
	l.mu.producers.OnLogStartOffsetIncremented(l.mu.logStartOffset)
	if err := l.mu.epochs.TruncateFromStart(l.mu.logStartOffset); err != nil {
		return n, l.ioFailure("truncate leader epoch cache", err)
	}
	if err := l.mu.producers.DeleteSnapshotsBelow(rest[0].baseOffset); err != nil {
		return n, l.ioFailure("delete producer snapshots", err)
	}
	l.logger.Info("deleted segments", "partition", l.tp.String(), "count", n, "reason", reason, "log_start_offset", l.mu.logStartOffset)
	return n, nil
}
