package commitlog

import (
	"errors"
	"fmt"
)

// CorruptBatchError is bytes that are not a valid batch header where a
// batch must start in a segment: damage on disk. It fails only the reads
// that reach it (Kafka's FileRecords iteration stops at the bad batch the
// same way); errors.Is(err, ErrCorruptBatch) holds for it.
type CorruptBatchError struct {
	File     string // the segment's .log file
	Position int64  // where the damaged batch starts
	// Offset is the first offset the damage hides: the offset after the
	// last intact batch before it, or, when the scan started at an offset
	// index entry, that entry's offset (one the damaged batch holds).
	Offset int64
	Err    error // what is wrong with the bytes (records.ErrBadMagic, ...)
}

func (e *CorruptBatchError) Error() string {
	return fmt.Sprintf("corrupt record batch in %s at position %d (offset %d): %v", e.File, e.Position, e.Offset, e.Err)
}

func (e *CorruptBatchError) Unwrap() []error { return []error{ErrCorruptBatch, e.Err} }

// corruptionKey identifies one damaged place, so it is reported once.
type corruptionKey struct {
	file string
	pos  int64
}

// reportCorruption logs a damaged batch and tells the Manager (its metric)
// the first time this place is met; later reads of it stay quiet.
func (l *Log) reportCorruption(err error) {
	var ce *CorruptBatchError
	if !errors.As(err, &ce) {
		return
	}
	if _, seen := l.corrupt.LoadOrStore(corruptionKey{ce.File, ce.Position}, true); seen {
		return
	}
	l.logger.Error("corrupt record batch on disk: reads from this offset fail with CORRUPT_MESSAGE, earlier batches are served",
		"partition", l.tp.String(), "file", ce.File, "position", ce.Position, "offset", ce.Offset, "err", ce.Err)
	if l.onCorrupt != nil {
		l.onCorrupt(ce)
	}
}

// MissingSegmentError is a hole in a log's offsets between two segments
// that no compaction explains: a segment file was lost. The log is stopped
// (Kafka would serve around the hole without a word).
type MissingSegmentError struct {
	Dir      string
	From, To int64 // the offsets no segment holds: [From, To)
}

func (e *MissingSegmentError) Error() string {
	return fmt.Sprintf("no segment of %s holds offsets %d to %d: a segment ends at %d and the next starts at %d "+
		"(a segment file was lost); the partition is offline on this broker until its files are restored",
		e.Dir, e.From, e.To-1, e.From, e.To)
}

// findGap returns the first hole between consecutive segments that reaches
// above the log start and the cleaner's offset (below it the cleaner may
// have removed a segment's last records), or nil.
func findGap(segs []*segment, logStart, cleanerOffset int64, dir string) *MissingSegmentError {
	for i := 0; i+1 < len(segs); i++ {
		from, to := segs[i].nextOffset, segs[i+1].baseOffset
		if from < to && to > logStart && to > cleanerOffset {
			return &MissingSegmentError{Dir: dir, From: from, To: to}
		}
	}
	return nil
}

// checkGapLocked judges the hole Open found, once, with the topic's
// options: on a compacted topic holes are the cleaner's (or a compacted
// leader's, copied by a follower), on any other the log is stopped.
//
// A hole above the recovery point of an unclean stop is the crash's: a
// roll's background flush had not synced the older segment's tail, while
// a newer segment's name and some of its data were durable. The log then
// keeps what precedes the hole, as it does after a torn tail, so a crash
// loses only a suffix of the unflushed records.
func (l *Log) checkGapLocked() {
	gap, unflushed := l.mu.gap, l.mu.gapUnflushed
	l.mu.gap, l.mu.gapUnflushed = nil, false
	if gap == nil || l.mu.opts.Compact {
		return
	}
	if !unflushed {
		l.stop(gap)
		return
	}
	l.logger.Warn("unflushed records after a hole the crash left are dropped", "partition", l.tp.String(),
		"from", gap.From, "to", gap.To)
	if err := l.truncateToLocked(gap.From); err != nil {
		l.stop(fmt.Errorf("truncate at the crash's hole: %w", err))
	}
}

// stop takes this log, not its directory, out of service: every operation
// fails with ErrOffline and the reason (KAFKA_STORAGE_ERROR), the other
// partitions of the directory carry on.
func (l *Log) stop(reason error) {
	if !l.stopped.CompareAndSwap(nil, &reason) {
		return
	}
	l.logger.Error("partition log stopped: it answers KAFKA_STORAGE_ERROR on this broker",
		"partition", l.tp.String(), "err", reason)
}

// OfflineErr says why the log serves nothing, or nil when it is usable:
// its directory failed, or the log was stopped (a lost segment).
func (l *Log) OfflineErr() error {
	if p := l.stopped.Load(); p != nil {
		return fmt.Errorf("%s: %w: %w", l.tp, ErrOffline, *p)
	}
	if l.offline.Load() {
		return fmt.Errorf("%s: %w", l.tp, ErrOffline)
	}
	return nil
}

// logStartExplained decides a log start offset checkpoint beyond the log
// end. An unclean stop explains it: records below the log start were
// deleted (DeleteRecords past records never flushed, or segments whose
// deletion outlived the stop while the new active segment did not), and
// the log restarts empty there, as Kafka's does. After a clean stop, which
// flushed everything, or with a recovery point that contradicts the log
// too, the checkpoint is logged and ignored, so a bad checkpoint deletes no
// data.
func (l *Log) logStartExplained(st StartState, rpIgnored bool, leo int64) bool {
	if !st.CleanShutdown && !rpIgnored {
		l.logger.Warn("log start offset beyond the records that survived an unclean stop: the log restarts empty there",
			"partition", l.tp.String(), "log_start_offset", st.LogStartOffset, "log_end_offset", leo, "recovery_point", st.RecoveryPoint)
		return true
	}
	l.logger.Warn("log-start-offset-checkpoint is beyond the log end offset, which it cannot be: ignored, the log starts at its first segment",
		"partition", l.tp.String(), "checkpoint", st.LogStartOffset, "log_end_offset", leo, "clean_shutdown", st.CleanShutdown)
	return false
}

// noSpace records a failed append for lack of space; the first of an
// episode is logged (by the Manager, once per log dir).
func (l *Log) noSpace(err error) {
	if l.full.Swap(true) {
		return
	}
	if l.onFull != nil {
		l.onFull(true, err)
		return
	}
	l.logger.Error("no space left on device: appends fail with KAFKA_STORAGE_ERROR until space is freed",
		"partition", l.tp.String(), "dir", l.Dir(), "err", err)
}

// spaceAgain ends the log's full-disk episode after a successful append.
func (l *Log) spaceAgain() {
	if !l.full.Load() || !l.full.Swap(false) {
		return
	}
	if l.onFull != nil {
		l.onFull(false, nil)
		return
	}
	l.logger.Info("appends succeed again after the disk was full", "partition", l.tp.String(), "dir", l.Dir())
}
