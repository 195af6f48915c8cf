package cleaner

import (
	"cmp"
	"slices"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// txnTracker follows transactions through one clean, batch by batch in
// offset order from the log start (Kafka's CleanedTransactionMetadata): it
// tells which data batches belong to aborted transactions (they go) and
// which markers may go because no batch of their transaction is left
// before them in this clean.
type txnTracker struct {
	// pending are the log's aborted transactions not reached yet, by first
	// offset.
	pending []commitlog.AbortedTxn
	// aborted holds, by producer, the aborted transaction being read.
	aborted map[int64]*ongoingAbort
	// committed holds the producers with a batch of a transaction that was
	// not aborted read since their last marker.
	committed map[int64]bool
	// dropIndex lists the aborted transactions with no batch left: the
	// cleaned segment's transaction index leaves them out.
	dropIndex []commitlog.AbortedTxn
}

type ongoingAbort struct {
	txn      commitlog.AbortedTxn
	observed bool // a batch of it was read in this clean
}

func newTxnTracker(aborted []commitlog.AbortedTxn) *txnTracker {
	pending := slices.Clone(aborted)
	slices.SortStableFunc(pending, func(a, b commitlog.AbortedTxn) int { return cmp.Compare(a.FirstOffset, b.FirstOffset) })
	return &txnTracker{pending: pending, aborted: map[int64]*ongoingAbort{}, committed: map[int64]bool{}}
}

// consumeUpTo starts the aborted transactions that begin at or before offset.
func (t *txnTracker) consumeUpTo(offset int64) {
	for len(t.pending) > 0 && t.pending[0].FirstOffset <= offset {
		a := t.pending[0]
		t.aborted[a.ProducerID] = &ongoingAbort{txn: a}
		t.pending = t.pending[1:]
	}
}

// onData reads a data batch and reports whether it belongs to an aborted
// transaction (Kafka's onBatchRead).
func (t *txnTracker) onData(h records.Header) bool {
	t.consumeUpTo(h.LastOffset())
	if !h.IsTransactional() {
		return false
	}
	if a, ok := t.aborted[h.ProducerID]; ok {
		a.observed = true
		return true
	}
	t.committed[h.ProducerID] = true
	return false
}

// onMarker reads a control batch and reports whether it may be discarded
// (Kafka's onControlBatchRead): an ABORT marker once none of its
// transaction's batches is left before it, a COMMIT marker once none of
// its transaction's batches was read, an empty control batch (already
// cleaned) always. Other control types stay. hasRecord is false for an
// empty batch; typ is its first record's control type.
func (t *txnTracker) onMarker(h records.Header, typ int16, hasRecord bool) bool {
	t.consumeUpTo(h.LastOffset())
	if !hasRecord {
		return true
	}
	switch typ {
	case records.ControlAbort:
		a, ok := t.aborted[h.ProducerID]
		delete(t.aborted, h.ProducerID)
		if ok && a.observed {
			return false
		}
		if ok {
			t.dropIndex = append(t.dropIndex, a.txn)
		}
		return true
	case records.ControlCommit:
		read := t.committed[h.ProducerID]
		delete(t.committed, h.ProducerID)
		return !read
	}
	return false
}

// takeDropped returns the aborted transactions to leave out of the cleaned
// index since the last call.
func (t *txnTracker) takeDropped() []commitlog.AbortedTxn {
	out := t.dropIndex
	t.dropIndex = nil
	return out
}
