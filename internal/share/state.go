package share

import "time"

// countOp is what a transition does to the delivery count (Kafka's
// DeliveryCountOps).
type countOp int8

const (
	countKeep countOp = iota
	countUp
	countDown
)

// recState is the state of one offset, or of a whole in-flight batch while
// the batch has one state.
type recState struct {
	state RecordState
	count int
	// member owns the record while it is ACQUIRED; "" otherwise.
	member string
	// deadline is when the acquisition lock of an ACQUIRED record expires.
	// Invariant: zero unless the record is ACQUIRED or a transition out of
	// ACQUIRED waits for its write.
	deadline time.Time
	// pend is the state to restore if the write of the transition in
	// flight fails. Invariant: non-nil exactly while a transition waits for
	// its write; such a record is neither acquirable nor acknowledgeable.
	pend *rollback
	// terminal marks a record archived because the log start offset moved
	// past it or the log no longer holds it: a failed write never brings it
	// back.
	terminal bool
}

type rollback struct {
	state  RecordState
	member string
}

// update moves the record to next if the move is valid (Kafka's
// InFlightState.tryUpdateState): AVAILABLE only to ACQUIRED, ACQUIRED to
// any other state, nothing out of ACKNOWLEDGED or ARCHIVED. A record at the
// delivery limit made available is archived instead, except when the
// delivery is undone (countDown).
func (r *recState) update(next RecordState, op countOp, limit int, member string) bool {
	if r.pend != nil {
		return false
	}
	if next == Available && op != countDown && r.count >= limit {
		next = Archived
	}
	if next == r.state || r.state.terminal() || (r.state == Available && next != Acquired) {
		return false
	}
	r.state = next
	if next != Archived {
		switch op {
		case countUp:
			r.count++
		case countDown:
			r.count--
		}
	}
	r.member = member
	return true
}

// start begins a transition that a write must confirm.
func (r *recState) start(next RecordState, op countOp, limit int) bool {
	before := rollback{state: r.state, member: r.member}
	if !r.update(next, op, limit, "") {
		return false
	}
	r.pend = &before
	return true
}

// finish confirms (ok) or rolls back the transition in flight (Kafka's
// completeStateTransition). A rolled-back record whose lock expired in the
// meantime becomes available, or archived at the delivery limit.
func (r *recState) finish(ok bool, now time.Time, limit int) {
	if r.pend == nil {
		return
	}
	prev := r.pend
	r.pend = nil
	if ok || r.terminal {
		r.deadline = time.Time{}
		return
	}
	if prev.state == Acquired && !r.deadline.IsZero() && !now.Before(r.deadline) {
		r.state, r.member, r.deadline = Available, "", time.Time{}
		if r.count >= limit {
			r.state = Archived
		}
		return
	}
	r.state, r.member = prev.state, prev.member
	if r.state != Acquired {
		r.deadline = time.Time{}
	}
}

// archive archives the record for good (Kafka's InFlightState.archive).
func (r *recState) archive() {
	r.terminal = true
	r.state, r.member, r.deadline = Archived, "", time.Time{}
}

// inflight is a range of fetched offsets: one state for the whole range
// until an acknowledgement, a partial acquisition or a moved start offset
// splits it into per-offset states (Kafka's InFlightBatch).
type inflight struct {
	first, last int64
	batch       recState
	// offsets, when non-nil, holds the state of each offset (index offset -
	// first) and batch is unused. Invariant: len(offsets) == last-first+1;
	// never reallocated, so pending writes may point into it.
	offsets []recState
}

// split switches the batch to per-offset states (Kafka's
// maybeInitializeOffsetStateUpdate).
func (b *inflight) split() {
	if b.offsets != nil {
		return
	}
	b.offsets = make([]recState, b.last-b.first+1)
	for i := range b.offsets {
		b.offsets[i] = b.batch
		b.offsets[i].pend = nil
		if b.batch.pend != nil {
			p := *b.batch.pend
			b.offsets[i].pend = &p
		}
	}
	b.batch = recState{}
}

// at returns the state of offset o, which the batch must hold.
func (b *inflight) at(o int64) *recState {
	if b.offsets == nil {
		return &b.batch
	}
	return &b.offsets[o-b.first]
}
