package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// startCompletion prepares CompleteCommit/CompleteAbort for a transaction
// just decided (or found decided by a load) and emits its MarkerJob; with
// no partition to mark (a TV2 abort with nothing added) it writes the
// completion at once, as Kafka does.
func (m *Manager) startCompletion(t *txnMetadata) (transit, int16) {
	tr, code := t.prepareComplete(m.now.UnixMilli())
	if code != 0 {
		return tr, code
	}
	t.completion = &tr
	if len(t.partitions) == 0 {
		m.writeCompletion(t)
		return tr, 0
	}
	m.markers = append(m.markers, MarkerJob{
		TransactionalID: t.id, ProducerID: t.producerID, ProducerEpoch: t.producerEpoch,
		Commit: t.state == PrepareCommit, CoordinatorEpoch: m.coordinatorEpoch,
		Partitions: sortedPartitions(t.partitions),
	})
	return tr, 0
}

// MarkersWritten reports that every partition of job has its marker: the
// transaction's CompleteCommit or CompleteAbort is written (and written
// again after a failure until it is durable, as Kafka retries it). A job
// that no longer matches the transaction is ignored.
func (m *Manager) MarkersWritten(now time.Time, job MarkerJob) {
	m.now = now
	t, ok := m.txns[job.TransactionalID]
	if !ok || t.completion == nil || t.completionInFlight ||
		t.producerID != job.ProducerID || t.producerEpoch != job.ProducerEpoch {
		return
	}
	m.writeCompletion(t)
}

func (m *Manager) writeCompletion(t *txnMetadata) {
	tr := *t.completion
	t.completionInFlight = true
	m.writes = append(m.writes, Write{Records: []Record{m.record(t.id, tr)}, Done: func(err error) {
		t.completionInFlight = false
		switch {
		case err == nil:
			t.complete(tr)
			t.completion = nil
		case m.stopped || WriteErrorCode(err) == kerr.NotCoordinator.Code:
			// The partition moved: its next coordinator completes it.
		default:
			m.retries = append(m.retries, retry{t: t, due: m.now.Add(m.cfg.CompletionRetryBackoff)})
		}
	}})
}

// retryCompletions writes again the completions due at now.
func (m *Manager) retryCompletions(now time.Time) {
	kept := m.retries[:0]
	for _, r := range m.retries {
		switch {
		case now.Before(r.due):
			kept = append(kept, r)
		case m.txns[r.t.id] == r.t && r.t.completion != nil && !r.t.completionInFlight:
			m.writeCompletion(r.t)
		}
	}
	m.retries = kept
}

// abortTimedOut fences and aborts the ongoing transactions past their
// timeout (Kafka's abortTimedOutTransactions): the epoch is raised, so the
// producer is fenced.
func (m *Manager) abortTimedOut(now time.Time) {
	nowMs := now.UnixMilli()
	for _, id := range m.TransactionalIDs() {
		t := m.txns[id]
		if t.state != Ongoing || t.hasPending || t.startTimestamp+int64(t.timeoutMs) >= nowMs {
			continue
		}
		tr, code := t.prepareFenceProducerEpoch()
		if code == 0 {
			m.fenceAndAbort(now, t, tr.producerEpoch, func(int16) {})
		}
	}
}

// expireIDs removes the ids idle past transactional.id.expiration.ms in
// Empty, CompleteCommit or CompleteAbort: a tombstone each, and the id is
// forgotten once it is durable (Kafka's removeExpiredTransactionalIds).
func (m *Manager) expireIDs(now time.Time) {
	limit := now.Add(-m.cfg.TransactionalIDExpiration).UnixMilli()
	for _, id := range m.TransactionalIDs() {
		t := m.txns[id]
		if t.hasPending || !t.state.expirationAllowed() || t.lastUpdateTimestamp > limit {
			continue
		}
		tr, code := t.prepareDead()
		if code != 0 {
			continue
		}
		m.writes = append(m.writes, Write{Records: []Record{{Key: txnKey(id)}}, Done: func(err error) {
			if err == nil && m.txns[id] == t && t.pendingIs(Dead) && t.producerEpoch == tr.producerEpoch {
				delete(m.txns, id)
				return
			}
			t.hasPending = false
		}})
	}
}
