package share

import (
	"fmt"
	"time"
)

// pendingWrite is a Write handed out and not yet done.
type pendingWrite struct {
	// rollback: a failed write restores the records' earlier states (an
	// acknowledgement or a release); a lock-expiry write is kept whatever
	// its outcome, as Kafka keeps it.
	rollback bool
	changes  []change
}

// change is a range of one batch moved by a write; the batch may be split
// into per-offset states before the write is done.
type change struct {
	b           *inflight
	first, last int64
}

// newWrite records the changes and returns the Write to send.
func (p *Partition) newWrite(rollback bool, changes []change, batches []StateBatch) *Write {
	p.lastID++
	p.writes[p.lastID] = &pendingWrite{rollback: rollback, changes: changes}
	return &Write{
		ID: p.lastID, StateEpoch: p.stateEpoch, LeaderEpoch: p.leaderEpoch,
		StartOffset: p.start, DeliveryCompleteCount: p.deliveryComplete(), Batches: batches,
	}
}

// PendingWrites returns the number of writes handed out and not yet done.
func (p *Partition) PendingWrites() int { return len(p.writes) }

// WriteDone reports the outcome of the write id: err nil when the share
// coordinator recorded it. It confirms the transitions of the write, or
// rolls them back (an acknowledgement or release answered with err), and
// then moves the start offset past the records now acknowledged or
// archived. It returns whether the start offset or the window changed, so
// that fetches waiting for room can be retried.
func (p *Partition) WriteDone(id uint64, err error, now time.Time) (bool, error) {
	w, ok := p.writes[id]
	if !ok {
		return false, fmt.Errorf("share partition: no write %d in flight", id)
	}
	delete(p.writes, id)
	commit := err == nil || !w.rollback
	for _, c := range w.changes {
		p.finishRange(c, commit, now)
	}
	if err != nil && w.rollback {
		return false, nil
	}
	return p.advance(), nil
}

// finishRange confirms or rolls back the transitions of c.
func (p *Partition) finishRange(c change, ok bool, now time.Time) {
	if c.b.offsets == nil {
		p.finishOne(&c.b.batch, ok, now)
	} else {
		for o := max(c.first, c.b.first); o <= min(c.last, c.b.last); o++ {
			p.finishOne(c.b.at(o), ok, now)
		}
	}
	// A record rolled back to available below a start offset that moved
	// meanwhile is done: the log no longer holds it.
	if !ok && c.b.first < p.start {
		p.archive(c.b.first, p.start, []*inflight{c.b}, Available)
	}
}

func (p *Partition) finishOne(r *recState, ok bool, now time.Time) {
	r.finish(ok, now, p.cfg.DeliveryCountLimit)
	if r.state == Available {
		p.findNext = true
	}
}

// rollbackNow undoes transitions started by a request that then failed.
func (p *Partition) rollbackNow(changes []change, now time.Time) {
	for _, c := range changes {
		p.finishRange(c, false, now)
	}
}

// deliveryComplete counts the records in the window that are acknowledged
// or archived (Kafka's deliveryCompleteCount, KIP-1226).
func (p *Partition) deliveryComplete() int32 {
	var n int32
	for _, b := range p.batches {
		if b.last < p.start {
			continue
		}
		if b.offsets == nil {
			if b.batch.state.terminal() {
				n += int32(b.last - max(b.first, p.start) + 1)
			}
			continue
		}
		for o := max(b.first, p.start); o <= b.last; o++ {
			if b.at(o).state.terminal() {
				n++
			}
		}
	}
	return n
}

// canAdvance reports whether the record at the start offset is done
// (Kafka's canMoveStartOffset).
func (p *Partition) canAdvance() bool {
	i := p.floor(p.start)
	if i < 0 || p.batches[i].last < p.start {
		return false
	}
	r := p.batches[i].at(p.start)
	return r.pend == nil && r.state.terminal()
}

// lastDone returns the last offset of the leading run of acknowledged or
// archived records, -1 when the first record is not done (Kafka's
// findLastOffsetAcknowledgedAndMetadata).
func (p *Partition) lastDone() int64 {
	last := int64(-1)
	for _, b := range p.batches {
		if p.gapActive() && b.last >= p.gap.start {
			return last
		}
		if b.offsets == nil {
			if b.batch.pend != nil || !b.batch.state.terminal() {
				return last
			}
			last = b.last
			continue
		}
		for o := b.first; o <= b.last; o++ {
			if r := b.at(o); r.pend != nil || !r.state.terminal() {
				return last
			}
			last = o
		}
	}
	return last
}

// advance moves the start offset past the leading acknowledged and
// archived records and drops the batches wholly below it (Kafka's
// maybeUpdateCachedStateAndOffsets).
func (p *Partition) advance() bool {
	if len(p.batches) == 0 || !p.canAdvance() {
		return false
	}
	done := p.lastDone()
	if done == -1 {
		return false
	}
	if done == p.batches[len(p.batches)-1].last {
		p.start, p.end, p.batches = done+1, done+1, nil
		return true
	}
	i := p.floor(done)
	keepFrom := i
	if done == p.batches[i].last {
		if next := p.batches[i+1].first; next > p.start {
			p.start = next
		}
		if p.gapActive() {
			p.start = min(p.gap.start, p.start)
		}
		keepFrom = i + 1
	} else if done+1 > p.start {
		p.start = done + 1
	}
	p.batches = p.batches[keepFrom:]
	return true
}
