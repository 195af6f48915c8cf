package share

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ReleaseMember makes the records the member holds available again, when
// its share session closes or it leaves the group (Kafka's
// releaseAcquiredRecords). The records were fetched but, as far as the
// broker knows, never processed, so their delivery count is taken back;
// records below the start offset are archived. The Write, nil when the
// member held nothing, must be recorded; until WriteDone the records are in
// transition.
func (p *Partition) ReleaseMember(member string, now time.Time) (*Write, error) {
	var changes []change
	var written []StateBatch
	for _, b := range p.batches {
		if b.offsets == nil && b.batch.state == Acquired && b.batch.member == member && b.first < p.start && p.start <= b.last {
			b.split()
		}
		for o := b.first; o <= b.last; o++ {
			r := b.at(o)
			if r.state != Acquired || r.member != member {
				if b.offsets == nil {
					break
				}
				continue
			}
			to, last := Available, o
			if b.offsets == nil {
				last = b.last
			}
			if last < p.start {
				to = Archived
			}
			if !r.start(to, countDown, p.cfg.DeliveryCountLimit) {
				p.rollbackNow(changes, now)
				return nil, errf(kerr.InvalidRecordState, "records %d-%d cannot be released", o, last)
			}
			changes = append(changes, change{b, o, last})
			written = append(written, StateBatch{o, last, r.state, int16(r.count)})
			if b.offsets == nil {
				break
			}
		}
	}
	if len(written) == 0 {
		return nil, nil
	}
	return p.newWrite(true, changes, written), nil
}

// Expire ends the acquisition locks that expired by now (Kafka's
// acquisition lock timeout): each such record becomes available again, or
// archived at the delivery limit or below the start offset. Records whose
// acknowledgement is being written are left to its outcome. Kafka keeps
// the new states whatever happens to the returned Write (nil when no lock
// expired); the start offset moves when it is done.
func (p *Partition) Expire(now time.Time) *Write {
	var changes []change
	var written []StateBatch
	for _, b := range p.batches {
		if b.offsets == nil && p.expired(&b.batch, now) && b.first < p.start && p.start <= b.last {
			b.split()
		}
		if b.offsets == nil {
			if p.expireOne(&b.batch, b.last, now) {
				changes = append(changes, change{b, b.first, b.last})
				written = append(written, StateBatch{b.first, b.last, b.batch.state, int16(b.batch.count)})
			}
			continue
		}
		for o := b.first; o <= b.last; o++ {
			if r := b.at(o); p.expireOne(r, o, now) {
				changes = append(changes, change{b, o, o})
				written = append(written, StateBatch{o, o, r.state, int16(r.count)})
			}
		}
	}
	if len(written) == 0 {
		return nil
	}
	return p.newWrite(false, changes, written)
}

func (p *Partition) expired(r *recState, now time.Time) bool {
	return r.state == Acquired && r.pend == nil && !r.deadline.IsZero() && !now.Before(r.deadline)
}

// expireOne ends the expired lock of r, whose last offset is last.
func (p *Partition) expireOne(r *recState, last int64, now time.Time) bool {
	if !p.expired(r, now) {
		return false
	}
	to := Available
	if last < p.start {
		to = Archived
	}
	if !r.update(to, countKeep, p.cfg.DeliveryCountLimit, "") {
		return false
	}
	r.deadline = time.Time{}
	if r.state == Available {
		p.findNext = true
	}
	return true
}

// NextDeadline returns the earliest lock deadline of the acquired records,
// false when none is acquired: when the caller should call Expire next.
func (p *Partition) NextDeadline() (time.Time, bool) {
	var next time.Time
	for _, b := range p.batches {
		if b.offsets == nil {
			next = earlier(next, &b.batch)
			continue
		}
		for i := range b.offsets {
			next = earlier(next, &b.offsets[i])
		}
	}
	return next, !next.IsZero()
}

func earlier(t time.Time, r *recState) time.Time {
	if r.state != Acquired || r.pend != nil || r.deadline.IsZero() {
		return t
	}
	if t.IsZero() || r.deadline.Before(t) {
		return r.deadline
	}
	return t
}
