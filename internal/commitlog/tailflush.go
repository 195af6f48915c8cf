package commitlog

import (
	"slices"

	"github.com/sluice-io/sluice/internal/commitlog/producerstate"
)

// FlushTail makes the log durable up to the log end offset it observes
// first, without holding mu while it syncs, then moves the recovery point
// there. The Manager runs it for every log before each recovery-point
// checkpoint, so the checkpoint vouches for everything written up to one
// interval ago, active segments included. Kafka does not flush active
// segments under its default policy (flush.ms and flush.messages
// unbounded), so its recovery re-reads them whole after a crash; this
// bounds what sluice re-validates to the last interval's writes.
//
// The recovery point moves only if, meanwhile, the log was not truncated
// (truncations counts them: new bytes could sit below the observed end),
// not moved to another dir, and still holds the segment that was active:
// it must never vouch for bytes that were not synced. A segment removed
// meanwhile failing to sync is not an I/O failure.
func (l *Log) FlushTail() error {
	return l.flushTailOver(0)
}

// flushTailOver is FlushTail for a log that took at least minBytes since
// a tail flush last observed it; others are left as they are.
func (l *Log) flushTailOver(minBytes int64) error {
	l.mu.Lock()
	if l.mu.closed || l.Offline() {
		l.mu.Unlock()
		return nil
	}
	rp, dir, gen := l.mu.recoveryPoint, l.Dir(), l.mu.truncations
	active := l.activeLocked()
	end := active.nextOffset
	if end <= rp || l.mu.tailBytes < minBytes {
		l.mu.Unlock()
		return nil
	}
	l.mu.tailBytes = 0
	var segs []*segment
	for _, s := range l.mu.segments {
		if s.nextOffset > rp || s.baseOffset >= rp {
			segs = append(segs, s)
		}
	}
	// A producer snapshot at the observed end (unsynced, as a roll's), so
	// recovery replays the producer state from the recovery point instead
	// of from the active segment's base.
	l.mu.producers.UpdateMapEndOffset(end)
	snap, err := l.mu.producers.TakeSnapshotUnsynced()
	l.mu.Unlock()
	if err != nil {
		return l.ioFailure("flush tail", err)
	}
	// A segment's flush syncs its .log and writes and syncs its indexes:
	// everything below end was written before it, under mu.
	for _, s := range segs {
		if err := s.flush(); err != nil {
			return l.rollFlushFailed(s, err)
		}
	}
	if snap != "" {
		if err := producerstate.SyncSnapshot(l.fsys, snap); err != nil {
			return l.rollFlushFailed(nil, err)
		}
	}
	if err := l.fsys.SyncDir(dir); err != nil {
		return l.rollFlushFailed(nil, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed || l.Dir() != dir || l.mu.truncations != gen || !slices.Contains(l.mu.segments, active) {
		return nil
	}
	if end > l.mu.recoveryPoint {
		l.mu.recoveryPoint = end
	}
	// The previous tick's snapshot inside the active segment is now
	// redundant: keep those at segment boundaries (truncations reload
	// from them) and the newest one above them.
	bases := make([]int64, len(l.mu.segments))
	for i, s := range l.mu.segments {
		bases[i] = s.baseOffset
	}
	if err := l.mu.producers.RemoveStraySnapshots(bases); err != nil {
		return l.ioFailure("flush tail", err)
	}
	return nil
}
