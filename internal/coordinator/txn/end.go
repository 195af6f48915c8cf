package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func endError(code int16) EndTxnResult {
	return EndTxnResult{ErrorCode: code, ProducerID: -1, ProducerEpoch: -1}
}

// EndTxn commits or aborts the transaction (Kafka's handleEndTransaction):
// PrepareCommit or PrepareAbort is written, and once it is durable reply
// gets the answer and a MarkerJob is emitted (TakeMarkers). A retry of an
// EndTxn whose transaction already completed succeeds without a write.
func (m *Manager) EndTxn(now time.Time, req EndTxnRequest, reply func(EndTxnResult)) {
	m.endTransaction(now, req, true, reply)
}

// endDecision is what an EndTxn does before any write.
type endDecision struct {
	code int16
	// retried: a retry of an EndTxn that completed; answered without a write.
	retried bool
	needID  bool
	tr      transit
	// fence: the abort of a fenced transaction (its epoch is already raised).
	fence bool
}

// endTransaction serves EndTxn and the aborts the coordinator starts
// itself (fromClient false: fencing, timeouts), which use the server's
// transaction version.
func (m *Manager) endTransaction(now time.Time, req EndTxnRequest, fromClient bool, reply func(EndTxnResult)) {
	m.now = now
	if req.TransactionalID == "" {
		reply(endError(kerr.InvalidRequest.Code))
		return
	}
	t, ok := m.txns[req.TransactionalID]
	if !ok {
		reply(endError(kerr.InvalidProducerIDMapping.Code))
		return
	}
	tv2 := req.ClientTransactionVersion.SupportsEpochBump()
	var d endDecision
	if tv2 {
		d = m.decideEndTV2(now, t, req, fromClient)
	} else {
		d = m.decideEndTV1(now, t, req, fromClient)
	}
	switch {
	case d.needID:
		reply(EndTxnResult{NeedProducerID: true})
	case d.code != 0:
		reply(endError(d.code))
	case d.retried && tv2:
		reply(EndTxnResult{ProducerID: t.producerID, ProducerEpoch: t.producerEpoch})
	case d.retried:
		reply(endError(0))
	default:
		m.appendTransit(t, d.tr, func(code int16) {
			if code != 0 {
				// Under TV1 the fence's raised epoch stays in memory (the
				// old producer stays fenced) and is not raised again; a
				// TV2 fence raised nothing (Kafka's endTransaction).
				if d.fence && !tv2 {
					t.failedEpochFence = true
				}
				reply(endError(code))
				return
			}
			// One loop owns the Manager: nothing changed the transaction
			// between the prepare and now, so Kafka's re-checks hold.
			done, code := m.startCompletion(t)
			if code != 0 || !tv2 {
				reply(endError(code))
				return
			}
			// The producer's id and epoch once the transaction completes:
			// the bumped epoch, or the next id with epoch 0.
			reply(EndTxnResult{ProducerID: done.producerID, ProducerEpoch: done.producerEpoch})
		})
	}
}

// decideEndTV1 is Kafka's endTransactionWithTV1: the client's epoch must be
// the current one, and a retry is recognised by the completed state alone.
func (m *Manager) decideEndTV1(now time.Time, t *txnMetadata, req EndTxnRequest, fromClient bool) endDecision {
	switch {
	case t.producerID != req.ProducerID:
		return endDecision{code: kerr.InvalidProducerIDMapping.Code}
	case (fromClient && req.ProducerEpoch != t.producerEpoch) || req.ProducerEpoch < t.producerEpoch:
		return endDecision{code: kerr.ProducerFenced.Code}
	case t.hasPending && t.pending != PrepareEpochFence:
		return endDecision{code: kerr.ConcurrentTransactions.Code}
	}
	switch t.state {
	case Ongoing:
		return m.prepareEnd(now, t, req, TV0, ongoingEnd(req.Commit), t.pendingIs(PrepareEpochFence))
	case CompleteCommit, CompleteAbort:
		if req.Commit == (t.state == CompleteCommit) {
			return endDecision{retried: true}
		}
	case PrepareCommit, PrepareAbort:
		if req.Commit == (t.state == PrepareCommit) {
			return endDecision{code: kerr.ConcurrentTransactions.Code}
		}
	case Empty:
	default:
		return endDecision{code: kerr.UnknownServerError.Code}
	}
	return endDecision{code: kerr.InvalidTxnState.Code}
}

// decideEndTV2 is Kafka's endTransaction under TV2, where every EndTxn
// bumps the epoch: a retry carries the epoch before the bump (or the last
// epoch of a producer id the bump exhausted), and the same epoch on a
// completed transaction is the next transaction's EndTxn (an abort with
// nothing added is allowed then: the client aborts when unsure).
func (m *Manager) decideEndTV2(now time.Time, t *txnMetadata, req EndTxnRequest, fromClient bool) endDecision {
	fence := t.pendingIs(PrepareEpochFence)
	retryOnOverflow := !fence && t.prevProducerID == req.ProducerID &&
		req.ProducerEpoch == maxEpoch-1 && t.producerEpoch == 0
	retryOnBump := !fence && t.producerEpoch == req.ProducerEpoch+1
	isRetry := retryOnBump || retryOnOverflow
	var validEpoch bool
	switch {
	case fence:
		validEpoch = (!fromClient || req.ProducerEpoch == t.producerEpoch) && req.ProducerEpoch >= t.producerEpoch
	case t.state == PrepareCommit || t.state == PrepareAbort:
		validEpoch = retryOnBump
	case t.state == CompleteCommit || t.state == CompleteAbort:
		validEpoch = isRetry || req.ProducerEpoch == t.producerEpoch
	default:
		validEpoch = req.ProducerEpoch == t.producerEpoch
	}
	// A transition in flight answers first (KAFKA-18464): an empty abort
	// sent with the epoch a commit just returned, while that commit's
	// markers are written, must be retried, not fenced.
	switch {
	case t.hasPending && t.pending != PrepareEpochFence:
		return endDecision{code: kerr.ConcurrentTransactions.Code}
	case t.producerID != req.ProducerID && !retryOnOverflow:
		return endDecision{code: kerr.InvalidProducerIDMapping.Code}
	case !validEpoch:
		return endDecision{code: kerr.ProducerFenced.Code}
	}
	v := req.ClientTransactionVersion
	switch t.state {
	case Ongoing:
		return m.prepareEnd(now, t, req, v, ongoingEnd(req.Commit), fence)
	case CompleteCommit, CompleteAbort:
		sameResult := req.Commit == (t.state == CompleteCommit)
		switch {
		case sameResult && isRetry:
			return endDecision{retried: true}
		case !req.Commit && !isRetry:
			return m.prepareEnd(now, t, req, v, PrepareAbort, fence)
		}
	case PrepareCommit, PrepareAbort:
		if req.Commit == (t.state == PrepareCommit) {
			return endDecision{code: kerr.ConcurrentTransactions.Code}
		}
	case Empty:
		if !req.Commit {
			return m.prepareEnd(now, t, req, v, PrepareAbort, fence)
		}
	default:
		return endDecision{code: kerr.UnknownServerError.Code}
	}
	return endDecision{code: kerr.InvalidTxnState.Code}
}

func ongoingEnd(commit bool) State {
	if commit {
		return PrepareCommit
	}
	return PrepareAbort
}

// prepareEnd prepares PrepareCommit or PrepareAbort. Under TV2 an
// exhausted epoch needs the producer id to move to. A fencing abort drops
// the fence's pending state; under TV1 it takes the raised epoch from the
// request, under TV2 the abort's own bump is the fence (KAFKA-19367: the
// pinned Kafka bumps once, the fenced producer's epoch+1, with it as the
// last epoch, so that producer can recover with KIP-360).
func (m *Manager) prepareEnd(now time.Time, t *txnMetadata, req EndTxnRequest, v TransactionVersion, next State, fence bool) endDecision {
	nextID := int64(-1)
	if v.SupportsEpochBump() && !fence && epochExhausted(t.producerEpoch) {
		if req.FreshProducerID == nil {
			return endDecision{needID: true}
		}
		nextID = *req.FreshProducerID
	}
	noPartitionAdded := t.state != Ongoing
	if next == PrepareAbort && fence {
		t.hasPending = false
		if !v.SupportsEpochBump() {
			t.producerEpoch, t.lastProducerEpoch = req.ProducerEpoch, -1
		}
	}
	tr, code := t.prepareAbortOrCommit(next, v, nextID, now.UnixMilli(), noPartitionAdded)
	return endDecision{tr: tr, code: code, fence: fence}
}

// fenceAndAbort aborts t's ongoing transaction at the raised epoch of a
// fence just prepared (prepareFenceProducerEpoch); done gets the code of
// the abort's write.
func (m *Manager) fenceAndAbort(now time.Time, t *txnMetadata, epoch int16, done func(code int16)) {
	req := EndTxnRequest{
		TransactionalID: t.id, ProducerID: t.producerID, ProducerEpoch: epoch,
		ClientTransactionVersion: m.cfg.serverVersion(),
	}
	m.endTransaction(now, req, false, func(r EndTxnResult) {
		// A fence refused before its write would block the id for good.
		if r.ErrorCode != 0 && t.pendingIs(PrepareEpochFence) {
			t.hasPending = false
		}
		done(r.ErrorCode)
	})
}
