package dumplog

import "sort"

// expectedProducers replays the batches that end below offset the way
// Kafka's producer state does and returns each producer's entry as a
// snapshot taken at offset holds it, ordered by producer id.
func expectedProducers(batches []BatchManifest, offset int64) []ProducerSnapshotEntry {
	byID := map[int64]*ProducerSnapshotEntry{}
	for _, b := range batches {
		if b.LastOffset >= offset || b.ProducerID < 0 {
			continue
		}
		e, ok := byID[b.ProducerID]
		if !ok {
			e = &ProducerSnapshotEntry{ProducerID: b.ProducerID, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1,
				FirstSequence: -1, LastSequence: -1, LastOffset: -1}
			byID[b.ProducerID] = e
		}
		e.ProducerEpoch = b.ProducerEpoch
		if b.Control {
			// A transaction marker ends the transaction; the producer's
			// last data batch stays its batch metadata.
			e.CoordinatorEpoch = b.Records[0].Marker.CoordinatorEpoch
			e.CurrentTxnFirstOffset = -1
			e.LastTimestamp = b.MaxTimestamp
			continue
		}
		if b.Transactional && e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = b.BaseOffset
		}
		e.FirstSequence, e.LastSequence = b.BaseSequence, b.LastSequence
		e.LastOffset, e.OffsetDelta = b.LastOffset, int32(b.LastOffset-b.BaseOffset)
		e.LastTimestamp = b.MaxTimestamp
	}
	out := []ProducerSnapshotEntry{}
	for _, e := range byID {
		// The snapshot format holds one timestamp per producer, its last
		// timestamp (a marker's, after a transaction ends); a reader gives
		// it to the batch metadata too.
		e.BatchTimestamp = e.LastTimestamp
		out = append(out, *e)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ProducerID < out[b].ProducerID })
	return out
}

// KafkaRuleIndexes computes the offset and time index entries Kafka's
// LogSegment would write for a segment's batches appended one per call:
// an offset index entry (the batch's last offset at its position) and a
// time index entry (largest timestamp so far, last offset of its batch)
// once more than indexIntervalBytes were written since the last entry,
// and a final time index entry when the segment stops being active. A
// segment loaded after a clean shutdown starts counting bytes from zero
// again (Kafka's LogSegment keeps the count only in memory).
func KafkaRuleIndexes(s SegmentManifest, indexIntervalBytes int) ([]IndexEntry, []TimeIndexEntry) {
	index, timeIndex := []IndexEntry{}, []TimeIndexEntry{}
	maxTs, maxTsOffset := int64(-1), int64(-1)
	appendTime := func(ts, off int64) {
		if n := len(timeIndex); n > 0 && ts <= timeIndex[n-1].Timestamp {
			return
		}
		timeIndex = append(timeIndex, TimeIndexEntry{Timestamp: ts, Offset: off})
	}
	sinceLast := 0
	for _, b := range s.Batches {
		if b.MaxTimestamp > maxTs {
			maxTs, maxTsOffset = b.MaxTimestamp, b.LastOffset
		}
		if b.Reopened {
			sinceLast = 0
		}
		if sinceLast > indexIntervalBytes {
			index = append(index, IndexEntry{Offset: b.LastOffset, Position: b.Position})
			appendTime(maxTs, maxTsOffset)
			sinceLast = 0
		}
		sinceLast += int(b.Size)
	}
	if maxTs >= 0 {
		appendTime(maxTs, maxTsOffset)
	}
	return index, timeIndex
}
