package cleaner

import (
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// abortedTxns tells the data batches of aborted transactions, from the
// log's transaction index, for building the offset map over the dirty
// range (a producer has one transaction open at a time, so a transactional
// batch is aborted when it lies between the first offset and the ABORT
// marker of one of its producer's aborted transactions). The clean itself
// follows transactions with txnTracker, which also decides about markers.
type abortedTxns map[int64][]commitlog.AbortedTxn

func newAbortedTxns(txns []commitlog.AbortedTxn) abortedTxns {
	a := abortedTxns{}
	for _, t := range txns {
		a[t.ProducerID] = append(a[t.ProducerID], t)
	}
	return a
}

// aborted reports whether h is a data batch of an aborted transaction.
// Such batches neither enter the offset map (they must not shadow the
// committed values before them) nor survive a clean.
func (a abortedTxns) aborted(h records.Header) bool {
	if !h.IsTransactional() || h.IsControl() {
		return false
	}
	for _, t := range a[h.ProducerID] {
		if t.FirstOffset <= h.BaseOffset && h.LastOffset() < t.LastOffset {
			return true
		}
	}
	return false
}
