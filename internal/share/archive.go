package share

import "sort"

// archive archives the records in state initial within [from, to) of the
// batches bs for good (Kafka's archiveRecords), splitting batches it covers
// only in part. It reports whether it archived any.
func (p *Partition) archive(from, to int64, bs []*inflight, initial RecordState) bool {
	done := false
	for _, b := range bs {
		if b.first >= to {
			break
		}
		full := b.first >= from && b.last <= to-1
		if full && b.offsets == nil {
			if b.batch.state == initial {
				b.batch.archive()
				done = true
			}
			continue
		}
		if b.offsets == nil {
			if b.batch.state != initial {
				continue
			}
			b.split()
		}
		for o := max(from, b.first); o <= min(to-1, b.last); o++ {
			if r := b.at(o); r.state == initial {
				r.archive()
				done = true
			}
		}
	}
	return done
}

// archiveStale archives available batches between the fetch offset and
// the first batch the log returned: the log no longer holds them (a
// compacted topic), so they can never be delivered (Kafka's
// maybeArchiveStaleBatches).
func (p *Partition) archiveStale(fetchOffset, baseOffset int64) {
	if len(p.batches) == 0 || fetchOffset >= baseOffset {
		return
	}
	from := fetchOffset
	if i := p.floor(fetchOffset); i >= 0 && p.batches[i].last >= fetchOffset {
		from = p.batches[i].first
	}
	i, j := p.between(from, baseOffset-1)
	if i < j && p.archive(fetchOffset, baseOffset, p.batches[i:j], Available) {
		p.findNext = true
	}
}

// UpdateLogStartOffset moves the start offset to the log start offset when
// retention deleted records at or past it (Kafka's updateCacheAndOffsets):
// available records below it are archived; acquired ones are archived when
// released or when their lock expires. Nothing is written: the new start
// offset goes out with the next write. It reports whether anything
// changed.
func (p *Partition) UpdateLogStartOffset(logStart int64) bool {
	if logStart <= p.start {
		return false
	}
	if len(p.batches) == 0 {
		p.start, p.end = logStart, logStart
		return true
	}
	if p.archive(p.start, logStart, p.batches, Available) {
		p.findNext = true
	}
	p.start = logStart
	p.end = max(p.end, p.start)
	return true
}

// filterAborted archives the acquired records of aborted transactions and
// leaves them out of the answer (Kafka's
// filterAbortedTransactionalAcquiredRecords).
func (a *acquirer) filterAborted(recs []AcquiredRecords, n int) ([]AcquiredRecords, int) {
	if !a.req.ReadCommitted || len(a.req.Aborted) == 0 || len(recs) == 0 {
		return recs, n
	}
	drop := a.abortedBatches()
	if len(drop) == 0 {
		return recs, n
	}
	p := a.p
	for _, d := range drop {
		i := max(p.floor(d.BaseOffset), 0)
		_, j := p.between(d.BaseOffset, d.LastOffset)
		if i < j {
			p.archive(d.BaseOffset, d.LastOffset+1, p.batches[i:j], Acquired)
		}
	}
	out := subtract(recs, drop)
	n = 0
	for _, r := range out {
		n += int(r.LastOffset - r.FirstOffset + 1)
	}
	return out, n
}

// abortedBatches returns the fetched transactional batches whose
// transaction aborted, as a read_committed consumer skips them.
func (a *acquirer) abortedBatches() []FetchedBatch {
	txns := append([]AbortedTxn(nil), a.req.Aborted...)
	sort.Slice(txns, func(i, j int) bool { return txns[i].FirstOffset < txns[j].FirstOffset })
	aborted := map[int64]bool{}
	var out []FetchedBatch
	for _, fb := range a.req.Batches {
		if fb.ProducerID < 0 {
			continue
		}
		for len(txns) > 0 && txns[0].FirstOffset <= fb.LastOffset {
			aborted[txns[0].ProducerID] = true
			txns = txns[1:]
		}
		switch {
		case fb.AbortMarker:
			delete(aborted, fb.ProducerID)
		case fb.Transactional && aborted[fb.ProducerID]:
			out = append(out, fb)
		}
	}
	return out
}

// subtract removes the offsets of drop (sorted) from recs (sorted).
func subtract(recs []AcquiredRecords, drop []FetchedBatch) []AcquiredRecords {
	var out []AcquiredRecords
	for _, r := range recs {
		cur := r.FirstOffset
		for _, d := range drop {
			if d.LastOffset < cur || d.BaseOffset > r.LastOffset {
				continue
			}
			if d.BaseOffset > cur {
				out = append(out, AcquiredRecords{cur, d.BaseOffset - 1, r.DeliveryCount})
			}
			cur = d.LastOffset + 1
		}
		if cur <= r.LastOffset {
			out = append(out, AcquiredRecords{cur, r.LastOffset, r.DeliveryCount})
		}
	}
	return out
}
