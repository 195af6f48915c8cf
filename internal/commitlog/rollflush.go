package commitlog

import (
	"errors"
	"slices"

	"github.com/sluice-io/sluice/internal/commitlog/producerstate"
)

// rollFlush is the flush a roll asks for, run later outside the log's lock
// (Kafka's scheduleOnce("flush-log", flushUptoOffsetExclusive(newBase))).
type rollFlush struct {
	log *Log
	// next is the segment the roll created: everything below its base
	// offset is synced, then the recovery point moves to that base.
	next *segment
	// snapshot is the producer snapshot the roll wrote unsynced ("": none).
	snapshot string
}

// flushRolled syncs the segments below f.next's base offset that are at or
// above the recovery point, the roll's producer snapshot and the directory,
// without holding mu (appends go on meanwhile), then advances the recovery
// point to that base. The recovery point moves only if the log still holds
// f.next in the same directory: a truncation, full truncation or move in
// between may have replaced what was synced, and the recovery point must
// never vouch for bytes that were not. A segment removed meanwhile
// (retention, truncation, close) failing to sync is not an I/O failure.
func (l *Log) flushRolled(f rollFlush) error {
	upTo := f.next.baseOffset
	l.mu.RLock()
	if l.mu.closed || l.Offline() {
		l.mu.RUnlock()
		return nil
	}
	rp, dir := l.mu.recoveryPoint, l.Dir()
	var segs []*segment
	for i, s := range l.mu.segments {
		if s.baseOffset >= upTo {
			break
		}
		// The segment the roll sealed is synced even when a Flush already
		// covered its records: the roll then wrote its indexes' final
		// state (the last time index entry, the trim), which a segment
		// trusted below the recovery point is loaded from.
		sealed := i+1 < len(l.mu.segments) && l.mu.segments[i+1] == f.next
		if s.nextOffset > rp || s.baseOffset >= rp || sealed {
			segs = append(segs, s)
		}
	}
	l.mu.RUnlock()
	if len(segs) == 0 && upTo <= rp {
		return nil
	}
	for _, s := range segs {
		if err := s.flush(); err != nil {
			return l.rollFlushFailed(s, err)
		}
	}
	if f.snapshot != "" {
		if err := producerstate.SyncSnapshot(l.fsys, f.snapshot); err != nil {
			return l.rollFlushFailed(nil, err)
		}
	}
	if err := l.fsys.SyncDir(dir); err != nil {
		return l.rollFlushFailed(nil, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed || l.Dir() != dir || !slices.Contains(l.mu.segments, f.next) {
		return nil
	}
	if upTo > l.mu.recoveryPoint {
		l.mu.recoveryPoint = upTo
		l.mu.lastFlush = l.clk.Now()
	}
	return nil
}

// rollFlushFailed judges a background flush's error: when the log closed,
// moved, or no longer holds the segment (s, when known), the error is the
// removal's doing and is dropped; otherwise the disk failed.
func (l *Log) rollFlushFailed(s *segment, err error) error {
	l.mu.RLock()
	gone := l.mu.closed || s != nil && !slices.Contains(l.mu.segments, s)
	l.mu.RUnlock()
	if gone || errors.Is(err, ErrClosed) {
		return nil
	}
	return l.ioFailure("flush", err)
}
