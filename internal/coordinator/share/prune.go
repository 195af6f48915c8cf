package share

import "math"

// snapshotOffsets is Kafka's ShareCoordinatorOffsetsManager: the offset of
// each share partition's latest snapshot record, from which the offset
// below which every record of the partition is redundant follows (each
// live share partition has a snapshot at or above it, and every record
// below a snapshot of its key is replaced by it).
type snapshotOffsets struct {
	offsets map[Key]int64
	// lastRedundant is math.MaxInt64 until a snapshot is seen.
	// Invariant: it never exceeds the smallest offset in offsets as of
	// the last update.
	lastRedundant int64
}

func newSnapshotOffsets() snapshotOffsets {
	return snapshotOffsets{offsets: make(map[Key]int64), lastRedundant: math.MaxInt64}
}

// update records a snapshot (or, deleted, a tombstone) of k at offset,
// as Kafka's updateState: the key's offset is set, the redundant offset
// recomputed, and a deleted key stops holding it back afterwards.
func (s *snapshotOffsets) update(k Key, offset int64, deleted bool) {
	s.lastRedundant = min(s.lastRedundant, offset)
	s.offsets[k] = offset
	if len(s.offsets) > 0 {
		lowest := int64(math.MaxInt64)
		for _, o := range s.offsets {
			lowest = min(lowest, o)
		}
		s.lastRedundant = lowest
	}
	if deleted {
		delete(s.offsets, k)
	}
}

// SnapshotAppended records the offset of a record the runtime appended (or
// the load read): snapshots and tombstones move the offset below which
// the partition's records are redundant. Other records are ignored.
func (m *Manager) SnapshotAppended(key, value []byte, offset int64) {
	typ, k, err := DecodeKey(key)
	if err != nil || typ != RecordTypeSnapshot {
		return
	}
	m.snapshots.update(k, offset, value == nil)
}

// LastRedundantOffset returns the offset below which every record of the
// partition is redundant, false when there is none yet (Kafka's
// lastRedundantOffset): the coordinator deletes the records below it
// (DeleteRecords) every share.coordinator.state.topic.prune.interval.ms.
func (m *Manager) LastRedundantOffset() (int64, bool) {
	o := m.snapshots.lastRedundant
	if o <= 0 || o == math.MaxInt64 {
		return 0, false
	}
	return o, true
}
