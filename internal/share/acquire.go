package share

import (
	"slices"
	"time"
)

// FetchedBatch is one record batch a fetch from the log returned, as much
// of it as acquisition needs.
type FetchedBatch struct {
	BaseOffset, LastOffset int64
	// ProducerID is -1 for a batch without a producer.
	ProducerID    int64
	Transactional bool
	// AbortMarker marks a control batch holding an ABORT marker.
	AbortMarker bool
}

// AbortedTxn is one aborted transaction of a read_committed fetch.
type AbortedTxn struct{ ProducerID, FirstOffset int64 }

// AcquireRequest is one share partition of a ShareFetch after the log was
// read from FetchOffset (the partition's NextFetchOffset).
type AcquireRequest struct {
	MemberID string
	Mode     AcquireMode
	// BatchSize is ShareFetch's BatchSize: batch_optimized mode splits the
	// acquired records into ranges of about that many records, on record
	// batch boundaries. 0 or less splits nothing.
	BatchSize int
	// MaxRecords is ShareFetch's MaxRecords (max.poll.records); in
	// batch_optimized mode whole record batches may exceed it.
	MaxRecords  int
	FetchOffset int64
	// Batches are the record batches read, in offset order.
	Batches []FetchedBatch
	// ReadCommitted archives the records of Aborted transactions instead
	// of delivering them.
	ReadCommitted bool
	Aborted       []AbortedTxn
}

// acquirer carries one Acquire call.
type acquirer struct {
	p        *Partition
	req      AcquireRequest
	deadline time.Time
}

func (a *acquirer) recordLimit() bool { return a.req.Mode == RecordLimit }

// Acquire acquires for req.MemberID the records of the fetched batches it
// can (Kafka's SharePartition.acquire): records in flight and available
// again first, at their batch boundaries, then new records up to
// MaxRecords and the record-lock limit. The acquired records are locked
// until now plus the record lock duration. It returns them as ShareFetch's
// AcquiredRecords and their number; acquisition is not persisted.
func (p *Partition) Acquire(req AcquireRequest, now time.Time) ([]AcquiredRecords, int) {
	if req.MaxRecords <= 0 || len(req.Batches) == 0 {
		return nil, 0
	}
	a := &acquirer{p: p, req: req, deadline: now.Add(p.cfg.RecordLockDuration)}
	maxRecs, lastToAcq := p.limits(req.FetchOffset, req.MaxRecords, req.Batches[len(req.Batches)-1].LastOffset)
	if maxRecs <= 0 {
		return nil, 0
	}
	first := req.Batches[0].BaseOffset
	p.archiveStale(req.FetchOffset, first)
	base := first
	if i := p.floor(base); i < 0 {
		base = max(base, p.start)
	} else if p.batches[i].last >= base {
		base = p.batches[i].first
	}
	i, j := p.between(base, lastToAcq)
	if i == j {
		return a.filterAborted(a.acquireNew(first, lastToAcq, maxRecs))
	}
	out, n := a.acquireCached(slices.Clone(p.batches[i:j]), base, first, lastToAcq, maxRecs)
	if len(out) == 0 {
		return out, n
	}
	p.moveGap(out[len(out)-1].LastOffset + 1)
	return a.filterAborted(out, n)
}

// acquireCached acquires from the in-flight batches sub that overlap the
// fetched range, then the gaps between them and the new records after.
func (a *acquirer) acquireCached(sub []*inflight, base, first, lastToAcq int64, maxRecs int) ([]AcquiredRecords, int) {
	p := a.p
	var out []AcquiredRecords
	acquired, gapFrom := 0, base
	add := func(recs []AcquiredRecords, n int) { out = append(out, recs...); acquired += n }
	for _, b := range sub {
		if acquired >= maxRecs {
			break
		}
		if p.gapActive() {
			if gapFrom < b.first {
				add(a.acquireNew(gapFrom, b.first-1, maxRecs-acquired))
			}
			gapFrom = b.last + 1
			if acquired >= maxRecs {
				break
			}
		}
		full := b.first >= first && b.last <= lastToAcq
		subset := a.recordLimit() && b.last-b.first+1 > int64(maxRecs-acquired)
		throttle := p.shouldThrottle(b, first, lastToAcq)
		if throttle && acquired > 0 {
			// Deliver a record that failed often on its own next time.
			return out, acquired
		}
		if !full || b.offsets != nil || subset || throttle {
			if b.offsets == nil {
				if b.batch.state != Available || b.batch.pend != nil {
					continue
				}
				b.split()
			}
			n := a.acquireOffsets(b, first, lastToAcq, maxRecs-acquired, &out)
			acquired += n
			if throttle && n > 0 {
				return out, acquired
			}
			continue
		}
		if b.batch.state != Available || b.batch.pend != nil || !b.batch.update(Acquired, countUp, p.cfg.DeliveryCountLimit, a.req.MemberID) {
			continue
		}
		b.batch.deadline = a.deadline
		out = append(out, AcquiredRecords{b.first, b.last, int16(b.batch.count)})
		acquired += int(b.last - b.first + 1)
	}
	if last := sub[len(sub)-1].last; acquired < maxRecs && last < lastToAcq {
		add(a.acquireNew(last+1, lastToAcq, maxRecs-acquired))
	}
	return out, acquired
}

// limits bounds an acquisition by MaxRecords and the record-lock limit;
// at the limit, only records already in the window can be acquired (Kafka's
// lastOffsetAndMaxRecordsToAcquire).
func (p *Partition) limits(fetchOffset int64, maxFetch int, lastOffset int64) (int, int64) {
	maxRecs := int(min(int64(maxFetch), int64(p.cfg.MaxInFlightRecords)-p.inFlight()))
	if maxRecs <= 0 && fetchOffset <= p.end {
		return int(min(int64(maxFetch), p.end-fetchOffset+1)), min(lastOffset, p.end)
	}
	return maxRecs, lastOffset
}

// shouldThrottle reports whether the batch holds available records
// delivered often enough to be delivered in smaller pieces.
func (p *Partition) shouldThrottle(b *inflight, first, last int64) bool {
	limit := p.cfg.throttleLimit()
	if b.offsets == nil {
		return b.batch.count >= limit
	}
	top := 0
	for o := max(first, b.first); o <= min(last, b.last); o++ {
		if r := b.at(o); r.state == Available {
			top = max(top, r.count)
		}
	}
	return top >= limit
}

// acquireOffsets acquires the available offsets of a split batch within
// [first, last] (Kafka's acquireSubsetBatchRecords), one range per offset.
func (a *acquirer) acquireOffsets(b *inflight, first, last int64, maxFetch int, out *[]AcquiredRecords) int {
	limit, tl := a.p.cfg.DeliveryCountLimit, a.p.cfg.throttleLimit()
	acquired, throttledMax := 0, -1
	for o := max(first, b.first); o <= min(last, b.last); o++ {
		r := b.at(o)
		if r.state != Available || r.pend != nil {
			continue
		}
		// A record on its last delivery goes out alone.
		if limit > 2 && r.count == limit-1 && acquired > 0 {
			break
		}
		if r.count >= tl && throttledMax < 0 {
			throttledMax = max(1, len(b.offsets)>>(r.count-tl+1))
		}
		if !r.update(Acquired, countUp, limit, a.req.MemberID) {
			continue
		}
		r.deadline = a.deadline
		*out = append(*out, AcquiredRecords{o, o, int16(r.count)})
		acquired++
		if (limit > 2 && r.count == limit) || (a.recordLimit() && acquired == maxFetch) || acquired == throttledMax {
			break
		}
	}
	return acquired
}

// acquireNew acquires records not in flight yet, [firstOffset,
// lastOffset] at most maxFetch of them rounded up to a record batch
// boundary (Kafka's acquireNewBatchRecords).
func (a *acquirer) acquireNew(firstOffset, lastOffset int64, maxFetch int) ([]AcquiredRecords, int) {
	p := a.p
	firstAcq := firstOffset
	if len(p.batches) == 0 && p.end > firstAcq {
		firstAcq = p.end
	}
	// Never below the start offset: those records are done.
	firstAcq = max(firstAcq, p.start)
	lastAcq := lastOffset
	if int64(maxFetch) < lastAcq-firstAcq+1 {
		lastAcq = a.batchLastOf(firstAcq + int64(maxFetch) - 1)
		if p.gapActive() && lastAcq > lastOffset {
			lastAcq = lastOffset
		}
	}
	if i := p.floor(firstAcq); i >= 0 && p.batches[i].last >= firstAcq {
		return nil, 0
	}
	if i := p.floor(lastAcq); i >= 0 && p.batches[i].first > firstAcq {
		lastAcq = p.batches[p.floor(firstAcq)+1].first - 1
	}
	if firstAcq > lastAcq {
		return nil, 0
	}
	recs := a.createBatches(firstAcq, lastAcq, maxFetch)
	if p.batches[0].first == firstAcq {
		p.start = firstAcq
	}
	p.end = max(p.end, lastAcq)
	if a.recordLimit() {
		lastAcq = recs[0].LastOffset
	}
	p.moveGap(lastAcq + 1)
	return recs, int(lastAcq - firstAcq + 1)
}

// batchLastOf returns the last offset of the fetched batch holding o, o
// when none does.
func (a *acquirer) batchLastOf(o int64) int64 {
	var prev *FetchedBatch
	for i := range a.req.Batches {
		if o < a.req.Batches[i].BaseOffset {
			break
		}
		prev = &a.req.Batches[i]
	}
	if prev != nil && o <= prev.LastOffset {
		return prev.LastOffset
	}
	return o
}

// createBatches adds [firstAcq, lastAcq] to the window as acquired
// batches of about BatchSize records split on record batch boundaries
// (Kafka's createBatches). In record_limit mode a batch over maxFetch
// records is added whole but only its first maxFetch offsets are acquired.
func (a *acquirer) createBatches(firstAcq, lastAcq int64, maxFetch int) []AcquiredRecords {
	p := a.p
	var out []AcquiredRecords
	cur, size := firstAcq, int64(a.req.BatchSize)
	if !a.recordLimit() && size > 0 && lastAcq-firstAcq+1 > size {
		for _, fb := range a.req.Batches {
			if fb.BaseOffset > lastAcq {
				break
			}
			if fb.BaseOffset-cur >= size {
				out = append(out, AcquiredRecords{cur, fb.BaseOffset - 1, 1})
				cur = fb.BaseOffset
			}
		}
	}
	out = append(out, AcquiredRecords{cur, lastAcq, 1})
	acquired := recState{state: Acquired, count: 1, member: a.req.MemberID, deadline: a.deadline}
	if a.recordLimit() && lastAcq-cur+1 > int64(maxFetch) {
		b := &inflight{first: cur, last: lastAcq, batch: acquired}
		b.split()
		lastOut := cur + int64(maxFetch) - 1
		for o := lastOut + 1; o <= lastAcq; o++ {
			*b.at(o) = recState{state: Available}
		}
		out[0].LastOffset = lastOut
		p.findNext = true
		p.insert(b)
		return out
	}
	for _, r := range out {
		p.insert(&inflight{first: r.FirstOffset, last: r.LastOffset, batch: acquired})
	}
	return out
}

// moveGap moves the persisted-gap cursor past acquired offsets, or ends
// the gap window once the window grew past it (Kafka's
// maybeUpdatePersisterGapWindowStartOffset).
func (p *Partition) moveGap(o int64) {
	if p.gap == nil {
		return
	}
	if p.gap.end == p.end && o <= p.gap.end {
		p.gap.start = o
		return
	}
	p.gap = nil
}
