package share

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ValidateAckBatches checks one partition's acknowledgement batches as
// Kafka's KafkaApis.validateAcknowledgementBatches does before they reach
// the share partition: INVALID_REQUEST for a batch whose first offset is
// past its last, that starts before the previous batch ends, that has no
// type, more than one type but not one per offset, or a type outside
// 0..3 (0..4 with renew, which ShareFetch and ShareAcknowledge v2 allow
// when IsRenewAck is set).
func ValidateAckBatches(batches []AckBatch, renew bool) error {
	maxType := AckReject
	if renew {
		maxType = AckRenew
	}
	prevLast := int64(-1)
	for _, b := range batches {
		n := int64(len(b.AcknowledgeTypes))
		switch {
		case b.FirstOffset > b.LastOffset:
			return errf(kerr.InvalidRequest, "acknowledgement batch %d-%d is reversed", b.FirstOffset, b.LastOffset)
		case b.FirstOffset < prevLast:
			return errf(kerr.InvalidRequest, "acknowledgement batch %d-%d overlaps the previous one or is out of order", b.FirstOffset, b.LastOffset)
		case n == 0:
			return errf(kerr.InvalidRequest, "acknowledgement batch %d-%d has no type", b.FirstOffset, b.LastOffset)
		case n > 1 && b.LastOffset-b.FirstOffset != n-1:
			return errf(kerr.InvalidRequest, "acknowledgement batch %d-%d has %d types", b.FirstOffset, b.LastOffset, n)
		}
		for _, t := range b.AcknowledgeTypes {
			if t < 0 || AckType(t) > maxType {
				return errf(kerr.InvalidRequest, "acknowledgement type %d", t)
			}
		}
		prevLast = b.LastOffset
	}
	return nil
}

// ackCall carries one Acknowledge call.
type ackCall struct {
	p       *Partition
	member  string
	now     time.Time
	changes []change
	written []StateBatch
}

// Acknowledge applies a member's acknowledgements (Kafka's
// SharePartition.acknowledge): every record named must be ACQUIRED by the
// member, else INVALID_RECORD_STATE; ranges past the window are
// INVALID_REQUEST. Accept acknowledges, release makes available again
// (archived at the delivery limit), reject and gap archive, renew restarts
// the lock. On error nothing changes. Otherwise the returned Write, nil
// when nothing needs recording (only renewals, or records already below
// the start offset), must be recorded before the client is answered: its
// records are in transition until WriteDone.
func (p *Partition) Acknowledge(member string, batches []AckBatch, now time.Time) (*Write, error) {
	c := &ackCall{p: p, member: member, now: now}
	for _, b := range batches {
		if err := c.batch(b); err != nil {
			p.rollbackNow(c.changes, now)
			return nil, err
		}
	}
	if len(c.written) == 0 {
		return nil, nil
	}
	return p.newWrite(true, c.changes, c.written), nil
}

// batch applies one acknowledgement batch.
func (c *ackCall) batch(ab AckBatch) error {
	p := c.p
	for _, t := range ab.AcknowledgeTypes {
		if t < 0 || AckType(t) > AckRenew {
			return errf(kerr.InvalidRequest, "acknowledgement type %d", t)
		}
	}
	if len(ab.AcknowledgeTypes) == 0 || ab.LastOffset < ab.FirstOffset {
		return errf(kerr.InvalidRequest, "acknowledgement batch %d-%d", ab.FirstOffset, ab.LastOffset)
	}
	if ab.LastOffset < p.start {
		return nil
	}
	i := p.floor(ab.FirstOffset)
	if i < 0 {
		if ab.FirstOffset < p.start && p.start <= ab.LastOffset {
			i = p.floor(p.start)
		}
		if i < 0 {
			return errf(kerr.InvalidRecordState, "records %d-%d are not in flight", ab.FirstOffset, ab.LastOffset)
		}
	}
	_, j := p.between(p.batches[i].first, ab.LastOffset)
	lastCached := p.batches[j-1].last
	if lastCached < ab.FirstOffset || ab.LastOffset > lastCached {
		return errf(kerr.InvalidRequest, "records %d-%d are past the acquired records", ab.FirstOffset, ab.LastOffset)
	}
	for _, b := range p.batches[i:j] {
		if err := c.inBatch(ab, b); err != nil {
			return err
		}
	}
	return nil
}

// inBatch applies ab to the in-flight batch b it overlaps.
func (c *ackCall) inBatch(ab AckBatch, b *inflight) error {
	p := c.p
	if b.last < p.start {
		return nil
	}
	if b.offsets == nil {
		switch {
		case b.batch.member == "":
			return errf(kerr.InvalidRecordState, "records %d-%d are not acquired", b.first, b.last)
		case b.batch.member != c.member:
			return errf(kerr.InvalidRecordState, "records %d-%d are acquired by another member", b.first, b.last)
		case b.batch.pend != nil:
			return errf(kerr.InvalidRecordState, "records %d-%d are being acknowledged", b.first, b.last)
		}
	}
	full := b.first >= ab.FirstOffset && b.last <= ab.LastOffset
	startInside := b.first < p.start && p.start <= b.last
	if full && b.offsets == nil && len(ab.AcknowledgeTypes) == 1 && !startInside {
		return c.whole(b, AckType(ab.AcknowledgeTypes[0]))
	}
	if b.offsets == nil {
		if b.batch.state != Acquired {
			return errf(kerr.InvalidRecordState, "records %d-%d are not acquired", b.first, b.last)
		}
		b.split()
	}
	for o := max(b.first, ab.FirstOffset, p.start); o <= min(b.last, ab.LastOffset); o++ {
		t := AckType(ab.AcknowledgeTypes[0])
		if len(ab.AcknowledgeTypes) > 1 {
			t = AckType(ab.AcknowledgeTypes[o-ab.FirstOffset])
		}
		if err := c.offset(b, o, t); err != nil {
			return err
		}
	}
	return nil
}

// whole applies one type to a whole batch-state batch.
func (c *ackCall) whole(b *inflight, t AckType) error {
	r := &b.batch
	if r.state != Acquired {
		return errf(kerr.InvalidRecordState, "records %d-%d are not acquired", b.first, b.last)
	}
	if t == AckRenew {
		r.deadline = c.now.Add(c.p.cfg.RecordLockDuration)
		return nil
	}
	if !r.start(t.target(), countKeep, c.p.cfg.DeliveryCountLimit) {
		return errf(kerr.InvalidRecordState, "records %d-%d cannot be acknowledged", b.first, b.last)
	}
	c.changes = append(c.changes, change{b, b.first, b.last})
	c.written = append(c.written, StateBatch{b.first, b.last, r.state, int16(r.count)})
	return nil
}

// offset applies one type to one offset of a split batch.
func (c *ackCall) offset(b *inflight, o int64, t AckType) error {
	r := b.at(o)
	switch {
	case r.state != Acquired:
		return errf(kerr.InvalidRecordState, "offset %d is not acquired", o)
	case r.pend != nil:
		return errf(kerr.InvalidRecordState, "offset %d is being acknowledged", o)
	case r.member != c.member:
		return errf(kerr.InvalidRecordState, "offset %d is acquired by another member", o)
	}
	if t == AckRenew {
		r.deadline = c.now.Add(c.p.cfg.RecordLockDuration)
		return nil
	}
	if !r.start(t.target(), countKeep, c.p.cfg.DeliveryCountLimit) {
		return errf(kerr.InvalidRecordState, "offset %d cannot be acknowledged", o)
	}
	c.changes = append(c.changes, change{b, o, o})
	c.written = append(c.written, StateBatch{o, o, r.state, int16(r.count)})
	return nil
}
