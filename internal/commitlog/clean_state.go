package commitlog

// What the log cleaner (package commitlog/cleaner) reads of a log to decide
// whether and how far to clean it.

// CleanSegment describes an inactive segment for the log cleaner.
type CleanSegment struct {
	BaseOffset int64
	// NextOffset is the offset after the segment's last batch; compaction
	// can leave it below the next segment's base offset.
	NextOffset int64
	Size       int64
	// MaxTimestamp is the largest batch timestamp (-1 when none);
	// min.compaction.lag.ms compares it with the clock.
	MaxTimestamp int64
	// FirstBatchTimestamp is the first batch's max timestamp (-1 when
	// empty); max.compaction.lag.ms measures the age of dirty data by it.
	FirstBatchTimestamp int64
	// IndexEntries is the number of offset index entries, so the cleaner
	// can group segments whose entries fit one index.
	IndexEntries int
}

// CleanState is a consistent view of a log for one cleaning decision.
type CleanState struct {
	LogStartOffset int64
	LogEndOffset   int64
	// Segments are the inactive segments, oldest first: the active
	// segment is never cleaned.
	Segments []CleanSegment
	// ActiveBaseOffset is the active segment's base offset.
	ActiveBaseOffset int64
	// StableOffset is the last stable offset (open transactions and the high
	// watermark bound it): the cleaner stays below it, as Kafka's does.
	StableOffset int64
	// ProducerLastOffsets maps each producer id the log tracks to the last
	// offset of its last data batch. That batch is kept, emptied if need
	// be, so the producer's last sequence survives compaction.
	ProducerLastOffsets map[int64]int64
	// ProducerMarkerEpochs maps each producer the log tracks without a
	// data batch (its last entry is a transaction marker, as after a
	// Transactions V2 marker bumped its epoch) to its epoch: its markers of
	// that epoch are kept, emptied if need be, so the epoch survives for
	// fencing (Kafka's LastRecord without a data offset).
	ProducerMarkerEpochs map[int64]int16
	// MaxIndexEntries is how many entries one segment's indexes hold
	// (segment.index.bytes over the time index's 12-byte entries).
	MaxIndexEntries int
}

// CleanState returns the log's state for the cleaner.
func (l *Log) CleanState() (CleanState, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if err := l.checkUsableLocked(); err != nil {
		return CleanState{}, err
	}
	active := l.activeLocked()
	st := CleanState{
		LogStartOffset:       l.mu.logStartOffset,
		LogEndOffset:         active.nextOffset,
		ActiveBaseOffset:     active.baseOffset,
		StableOffset:         l.retentionBoundLocked(),
		ProducerLastOffsets:  make(map[int64]int64),
		ProducerMarkerEpochs: make(map[int64]int16),
		MaxIndexEntries:      min(active.index.maxEntries, active.timeIndex.maxEntries-1),
	}
	if first, ok := l.mu.producers.FirstUnstableOffset(); ok && first < st.StableOffset {
		st.StableOffset = first
	}
	for _, s := range l.mu.segments[:len(l.mu.segments)-1] {
		st.Segments = append(st.Segments, CleanSegment{BaseOffset: s.baseOffset, NextOffset: s.nextOffset,
			Size: s.size.Load(), MaxTimestamp: s.maxTimestamp, FirstBatchTimestamp: s.firstBatchTimestamp,
			IndexEntries: s.index.entries()})
	}
	for _, id := range l.mu.producers.ProducerIDs() {
		e, ok := l.mu.producers.Entry(id)
		switch {
		case !ok:
		case e.LastDataOffset() >= 0:
			st.ProducerLastOffsets[id] = e.LastDataOffset()
		default:
			st.ProducerMarkerEpochs[id] = e.ProducerEpoch
		}
	}
	return st, nil
}
