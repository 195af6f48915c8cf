package commitlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Flush makes everything appended so far durable and advances the
// recovery point to the log end offset.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return err
	}
	return l.flushLocked()
}

// FlushIfDue flushes when flush.ms has passed since the last flush; the
// Manager's flush scheduler calls it.
func (l *Log) FlushIfDue(now time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return err
	}
	if !l.mu.opts.flushMsEnabled() || now.Sub(l.mu.lastFlush) < l.mu.opts.FlushMs {
		return nil
	}
	return l.flushLocked()
}

// flushLocked syncs every segment at or above the recovery point, then the
// directory (new segment names), then moves the recovery point.
func (l *Log) flushLocked() error {
	leo := l.activeLocked().nextOffset
	for i, s := range l.mu.segments {
		nextBase := leo
		if i+1 < len(l.mu.segments) {
			nextBase = l.mu.segments[i+1].baseOffset
		}
		if nextBase <= l.mu.recoveryPoint && i+1 < len(l.mu.segments) {
			continue
		}
		if err := s.flush(); err != nil {
			return l.ioFailure("flush", err)
		}
	}
	if err := l.fsys.SyncDir(l.Dir()); err != nil {
		return l.ioFailure("flush", err)
	}
	if leo > l.mu.recoveryPoint {
		l.mu.recoveryPoint = leo
	}
	l.mu.unflushedMessages = 0
	l.mu.lastFlush = l.clk.Now()
	return nil
}

// flushSegmentsBelowLocked syncs the segments up to and including last
// that are at or above the recovery point, and moves the recovery point to
// the end of last.
func (l *Log) flushSegmentsBelowLocked(last *segment) error {
	for _, s := range l.mu.segments {
		if s.nextOffset > l.mu.recoveryPoint || s == last {
			if err := s.flush(); err != nil {
				return l.ioFailure("flush", err)
			}
		}
		if s == last {
			break
		}
	}
	if last.nextOffset > l.mu.recoveryPoint {
		l.mu.recoveryPoint = last.nextOffset
	}
	return nil
}

// Close flushes the log, gives the active segment its final time index
// entry, trims the indexes and closes every file: after Close the log can
// be opened without recovery. Files of deleted segments are removed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.filesClosed {
		return nil
	}
	retired := l.mu.closed // Retire stopped it: only the files remain to close
	l.mu.closed = true
	var errs []error
	if !l.offline.Load() && !retired {
		l.mu.producers.UpdateMapEndOffset(l.activeLocked().nextOffset)
		if err := l.mu.producers.TakeSnapshot(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", l.tp, err))
		}
		if err := l.flushLocked(); err != nil {
			errs = append(errs, err)
		}
		if err := l.activeLocked().onBecomeInactive(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", l.tp, err))
		} else if err := l.activeLocked().flush(); err != nil {
			errs = append(errs, fmt.Errorf("close %s: %w", l.tp, err))
		}
	}
	for _, s := range l.mu.segments {
		errs = append(errs, s.close())
	}
	for _, p := range l.mu.pendingDeletes {
		errs = append(errs, p.seg.removeDeleted())
	}
	l.mu.pendingDeletes = nil
	l.mu.filesClosed = true
	return errors.Join(errs...)
}

// Delete closes the log's files and removes its directory (topic
// deletion), at once or after Retire.
func (l *Log) Delete() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	if !l.mu.filesClosed {
		for _, s := range l.mu.segments {
			errs = append(errs, s.close())
		}
		for _, p := range l.mu.pendingDeletes {
			errs = append(errs, p.seg.close())
		}
		l.mu.closed, l.mu.filesClosed, l.mu.pendingDeletes = true, true, nil
	}
	dir := l.Dir()
	if l.mu.retiredDir != "" {
		dir = l.mu.retiredDir
	}
	if err := l.fsys.RemoveAll(dir); err != nil {
		errs = append(errs, fmt.Errorf("delete log %s: %w", l.tp, err))
	}
	return errors.Join(errs...)
}

// Retire is the first step of Kafka's asynchronous topic deletion: the log
// refuses new operations and its directory is renamed to newDir (Kafka's
// "<topic>-<partition>.<id>-delete"), while reads already holding its files
// finish; Delete later removes it.
func (l *Log) Retire(newDir string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return ErrClosed
	}
	l.mu.closed = true
	if err := l.fsys.Rename(l.Dir(), newDir); err != nil {
		return fmt.Errorf("rename %s for deletion: %w", l.Dir(), err)
	}
	l.mu.retiredDir = newDir
	if err := l.fsys.SyncDir(filepath.Dir(l.Dir())); err != nil {
		return fmt.Errorf("rename %s for deletion: %w", l.Dir(), err)
	}
	return nil
}

// RemoveDeletedSegments removes the files of segments deleted at least
// file.delete.delay.ms before now; the Manager's scheduler calls it.
func (l *Log) RemoveDeletedSegments(now time.Time) error {
	l.mu.Lock()
	var due []pendingDelete
	keep := l.mu.pendingDeletes[:0]
	for _, p := range l.mu.pendingDeletes {
		if !now.Before(p.at) {
			due = append(due, p)
		} else {
			keep = append(keep, p)
		}
	}
	l.mu.pendingDeletes = keep
	l.mu.Unlock()
	var errs []error
	for _, p := range due {
		errs = append(errs, p.seg.removeDeleted())
	}
	return errors.Join(errs...)
}

// closeSegments closes every file of a log that failed to open.
func (l *Log) closeSegments() {
	for _, s := range l.mu.segments {
		s.close()
	}
}
