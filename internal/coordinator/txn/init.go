package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func initError(code int16) InitResult {
	return InitResult{ErrorCode: code, ProducerID: -1, ProducerEpoch: -1}
}

// InitProducerID serves an InitProducerId with a transactional id (Kafka's
// handleInitProducerId): a new id gets a producer id and epoch 0, a known
// one its epoch bumped (or a new producer id once the epochs are
// exhausted). An ongoing transaction is fenced and aborted first, and the
// answer is CONCURRENT_TRANSACTIONS so that the client retries once the
// abort completes. reply runs once the new state is durable.
func (m *Manager) InitProducerID(now time.Time, req InitRequest, reply func(InitResult)) {
	m.now = now
	switch {
	case req.TransactionalID == "",
		(req.ProducerID == -1) != (req.ProducerEpoch == -1):
		reply(initError(kerr.InvalidRequest.Code))
		return
	case req.TimeoutMs <= 0 || int64(req.TimeoutMs) > m.cfg.MaxTimeout.Milliseconds():
		reply(initError(kerr.InvalidTransactionTimeout.Code))
		return
	}
	t, ok := m.txns[req.TransactionalID]
	if !ok {
		if req.FreshProducerID == nil {
			reply(InitResult{NeedProducerID: true})
			return
		}
		// Kept even if the write below fails, as Kafka keeps it: the retry
		// finds it with epoch -1 and reuses its producer id.
		t = newTxnMetadata(req.TransactionalID, *req.FreshProducerID, req.TimeoutMs, now.UnixMilli())
		m.txns[req.TransactionalID] = t
		req.FreshProducerID = nil
	}
	tr, code, needID := m.prepareInit(now, t, req)
	switch {
	case needID:
		reply(InitResult{NeedProducerID: true})
	case code != 0:
		reply(initError(code))
	case tr.state == PrepareEpochFence:
		m.fenceAndAbort(now, t, tr.producerEpoch, func(code int16) {
			if code == 0 {
				code = kerr.ConcurrentTransactions.Code
			}
			reply(initError(code))
		})
	default:
		m.appendTransit(t, tr, func(code int16) {
			if code != 0 {
				reply(initError(code))
				return
			}
			reply(InitResult{ProducerID: tr.producerID, ProducerEpoch: tr.producerEpoch})
		})
	}
}

// prepareInit is Kafka's prepareInitProducerIdTransit; needID asks for a
// fresh producer id, with nothing changed.
func (m *Manager) prepareInit(now time.Time, t *txnMetadata, req InitRequest) (tr transit, code int16, needID bool) {
	var expected *int16
	if req.ProducerID != -1 {
		expected = &req.ProducerEpoch
	}
	switch {
	case t.hasPending:
		return tr, kerr.ConcurrentTransactions.Code, false
	case expected != nil && !t.validProducerID(req.ProducerID, req.ProducerEpoch):
		return tr, kerr.ProducerFenced.Code, false
	}
	switch t.state {
	case PrepareAbort, PrepareCommit:
		return tr, kerr.ConcurrentTransactions.Code, false
	case Ongoing:
		// The raised epoch is never returned: the client retries after the
		// abort and gets the next one (a new producer id if this one
		// exhausted the epochs).
		tr, code = t.prepareFenceProducerEpoch()
		return tr, code, false
	case Empty, CompleteCommit, CompleteAbort:
		if epochExhausted(t.producerEpoch) && (expected == nil || *expected == t.producerEpoch) {
			if req.FreshProducerID == nil {
				return tr, 0, true
			}
			tr, code = t.prepareProducerIDRotation(*req.FreshProducerID, req.TimeoutMs, now.UnixMilli(), expected != nil)
			return tr, code, false
		}
		tr, code = t.prepareIncrementProducerEpoch(req.TimeoutMs, expected, now.UnixMilli())
		return tr, code, false
	}
	return tr, kerr.UnknownServerError.Code, false
}

// validProducerID is KIP-360's check of the producer id a client recovers
// with: any while the id has no epoch yet (just created), the current one,
// or the previous one with an exhausted epoch (a retry of the bump that
// moved it to a new id).
func (t *txnMetadata) validProducerID(producerID int64, epoch int16) bool {
	return t.producerEpoch == -1 || producerID == t.producerID ||
		(producerID == t.prevProducerID && epochExhausted(epoch))
}
