package producerstate

import (
	"fmt"
	"math"

	"github.com/sluice-io/sluice/internal/kafka"
)

// BatchesToRetain is how many of a producer's most recent batches are kept
// for duplicate detection: the producer may have at most five requests in
// flight (max.in.flight.requests.per.connection <= 5 with idempotence), so a
// retried batch is always among the last five.
const BatchesToRetain = 5

// BatchMetadata describes one appended batch of a producer.
type BatchMetadata struct {
	LastSeq     int32
	LastOffset  int64
	OffsetDelta int32
	// Timestamp is the batch's max timestamp.
	Timestamp int64
}

// FirstSeq is the sequence of the batch's first record, undoing the int32 wrap.
func (b BatchMetadata) FirstSeq() int32 { return decrementSequence(b.LastSeq, b.OffsetDelta) }

// FirstOffset is the offset of the batch's first record.
func (b BatchMetadata) FirstOffset() int64 { return b.LastOffset - int64(b.OffsetDelta) }

// decrementSequence subtracts d from a sequence that wraps to 0 after MaxInt32.
func decrementSequence(seq, d int32) int32 {
	if seq < d {
		return int32(int64(math.MaxInt32) - int64(d) + int64(seq) + 1)
	}
	return seq - d
}

// inSequence reports whether next directly follows last, wrapping after MaxInt32.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// Entry is the state of one producer id on one partition.
type Entry struct {
	ProducerID    int64
	ProducerEpoch int16
	// CoordinatorEpoch is the epoch of the transaction coordinator that wrote
	// the producer's last transaction marker (-1 if none).
	CoordinatorEpoch int32
	// LastTimestamp is the max timestamp of the producer's last batch or marker;
	// expiration is measured from it.
	LastTimestamp int64
	// CurrentTxnFirstOffset is the first offset of the producer's ongoing
	// transaction, or -1 when none is open.
	CurrentTxnFirstOffset int64
	// batches holds up to BatchesToRetain batches, oldest first.
	batches []BatchMetadata
}

func emptyEntry(producerID int64) *Entry {
	return &Entry{
		ProducerID:            producerID,
		ProducerEpoch:         kafka.NoProducerEpoch,
		CoordinatorEpoch:      -1,
		LastTimestamp:         kafka.NoTimestamp,
		CurrentTxnFirstOffset: -1,
	}
}

// Batches returns the retained batches, oldest first. The slice is a copy.
func (e *Entry) Batches() []BatchMetadata { return append([]BatchMetadata(nil), e.batches...) }

// IsEmpty reports whether no batch is retained (e.g. only a marker was seen).
func (e *Entry) IsEmpty() bool { return len(e.batches) == 0 }

// LastSeq is the last sequence written, or -1.
func (e *Entry) LastSeq() int32 {
	if e.IsEmpty() {
		return kafka.NoSequence
	}
	return e.batches[len(e.batches)-1].LastSeq
}

// LastDataOffset is the offset of the last record written, or -1.
func (e *Entry) LastDataOffset() int64 {
	if e.IsEmpty() {
		return -1
	}
	return e.batches[len(e.batches)-1].LastOffset
}

// LastOffsetDelta is the offset delta of the last batch, or 0.
func (e *Entry) LastOffsetDelta() int32 {
	if e.IsEmpty() {
		return 0
	}
	return e.batches[len(e.batches)-1].OffsetDelta
}

func (e *Entry) clone() *Entry {
	c := *e
	c.batches = e.Batches()
	return &c
}

// setEpoch adopts a new producer epoch; batches of an older epoch say nothing
// about the sequences of the new one, so they are dropped.
func (e *Entry) setEpoch(epoch int16) {
	if e.ProducerEpoch != epoch {
		e.batches = e.batches[:0]
		e.ProducerEpoch = epoch
	}
}

func (e *Entry) addBatchMetadata(b BatchMetadata) {
	if len(e.batches) == BatchesToRetain {
		copy(e.batches, e.batches[1:])
		e.batches = e.batches[:BatchesToRetain-1]
	}
	e.batches = append(e.batches, b)
}

func (e *Entry) addBatch(epoch int16, b BatchMetadata) {
	e.setEpoch(epoch)
	e.addBatchMetadata(b)
	e.LastTimestamp = b.Timestamp
}

// merge applies a staged entry to the committed one.
func (e *Entry) merge(staged *Entry) {
	e.setEpoch(staged.ProducerEpoch)
	for _, b := range staged.batches {
		e.addBatchMetadata(b)
	}
	e.CoordinatorEpoch = staged.CoordinatorEpoch
	e.CurrentTxnFirstOffset = staged.CurrentTxnFirstOffset
	e.LastTimestamp = staged.LastTimestamp
}

// duplicateOf returns the retained batch with exactly the sequence range of
// a batch of the given epoch, if any.
func (e *Entry) duplicateOf(epoch int16, firstSeq, lastSeq int32) (BatchMetadata, bool) {
	if epoch != e.ProducerEpoch {
		return BatchMetadata{}, false
	}
	for _, b := range e.batches {
		if b.FirstSeq() == firstSeq && b.LastSeq == lastSeq {
			return b, true
		}
	}
	return BatchMetadata{}, false
}

func (e *Entry) String() string {
	return fmt.Sprintf("producer %d epoch %d lastSeq %d lastOffset %d coordinatorEpoch %d txnFirstOffset %d lastTimestamp %d batches %d",
		e.ProducerID, e.ProducerEpoch, e.LastSeq(), e.LastDataOffset(), e.CoordinatorEpoch,
		e.CurrentTxnFirstOffset, e.LastTimestamp, len(e.batches))
}
