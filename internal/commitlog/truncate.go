package commitlog

import "fmt"

// TruncateTo removes every batch at or after the one holding offset (a
// follower after OffsetForLeaderEpoch). Truncating at or above the log end
// offset does nothing; below the log start offset the log restarts empty at
// offset.
func (l *Log) TruncateTo(offset int64) error {
	return l.truncateThenCheckpoint(func() error { return l.truncateToLocked(offset) })
}

// truncateThenCheckpoint runs a truncation under mu and, when it lowered
// the recovery point, has the Manager write the recovery-point checkpoint
// before returning (onTruncated), so that no append after it can sit
// below a checkpointed recovery point without being synced.
func (l *Log) truncateThenCheckpoint(truncate func() error) error {
	l.mu.Lock()
	if err := l.checkUsableLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	rp := l.mu.recoveryPoint
	err := truncate()
	lowered := l.mu.recoveryPoint < rp
	l.mu.Unlock()
	if lowered && l.onTruncated != nil {
		l.onTruncated()
	}
	return err
}

func (l *Log) truncateToLocked(offset int64) error {
	if offset >= l.activeLocked().nextOffset {
		return nil
	}
	if offset < l.mu.logStartOffset || offset <= l.mu.segments[0].baseOffset {
		return l.truncateFullyLocked(offset)
	}
	l.mu.truncations++
	// Whole segments starting at or after offset go; the one holding it is cut.
	keep := len(l.mu.segments)
	for keep > 1 && l.mu.segments[keep-1].baseOffset >= offset {
		keep--
	}
	for _, s := range l.mu.segments[keep:] {
		if err := l.scheduleDeleteLocked(s); err != nil {
			return err
		}
	}
	segs := make([]*segment, keep)
	copy(segs, l.mu.segments[:keep])
	l.mu.segments = segs
	active := l.activeLocked()
	if _, err := active.truncateTo(offset); err != nil {
		return l.ioFailure("truncate", err)
	}
	if leo := active.nextOffset; l.mu.recoveryPoint > leo {
		l.mu.recoveryPoint = leo
	}
	if err := l.mu.epochs.TruncateFromEnd(active.nextOffset); err != nil {
		return l.ioFailure("truncate leader epoch cache", err)
	}
	if err := l.loadProducerStateLocked(); err != nil {
		return err
	}
	l.logger.Info("truncated log", "partition", l.tp.String(), "offset", offset, "log_end_offset", active.nextOffset)
	return nil
}

// TruncateFullyAndStartAt deletes every segment and restarts the log empty
// at offset (a follower far behind the leader's log start offset).
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	return l.truncateThenCheckpoint(func() error { return l.truncateFullyLocked(offset) })
}

func (l *Log) truncateFullyLocked(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("truncate %s fully: negative offset %d", l.tp, offset)
	}
	l.mu.truncations++
	for _, s := range l.mu.segments {
		if err := l.scheduleDeleteLocked(s); err != nil {
			return err
		}
	}
	seg, err := createSegment(l.fsys, l.Dir(), offset, l.mu.opts, l.clk.Now(), l.rollJitter(l.mu.opts))
	if err != nil {
		return l.ioFailure("truncate fully", err)
	}
	l.mu.segments = []*segment{seg}
	l.mu.logStartOffset = offset
	l.mu.recoveryPoint = offset
	if err := l.mu.producers.TruncateFullyAndStartAt(offset); err != nil {
		return l.ioFailure("truncate fully", err)
	}
	if l.mu.epochs != nil {
		if err := l.mu.epochs.Clear(); err != nil {
			return l.ioFailure("truncate fully", err)
		}
	}
	if err := l.fsys.SyncDir(l.Dir()); err != nil {
		return l.ioFailure("truncate fully", err)
	}
	return nil
}

// scheduleDeleteLocked renames a segment's files .deleted and queues their
// removal after file.delete.delay.ms; the caller drops it from the list.
func (l *Log) scheduleDeleteLocked(s *segment) error {
	if err := s.renameDeleted(); err != nil {
		return l.ioFailure("delete segment", err)
	}
	l.mu.pendingDeletes = append(l.mu.pendingDeletes, pendingDelete{seg: s, at: l.clk.Now().Add(l.mu.opts.FileDeleteDelay)})
	return nil
}
