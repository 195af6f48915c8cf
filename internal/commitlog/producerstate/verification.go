package producerstate

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// VerificationGuard names one verification of a producer's transaction on
// this partition (KIP-890, Kafka's VerificationGuard). The leader takes a
// guard before asking the transaction coordinator and appends the first
// transactional batch with it; a marker or a transactional batch written
// meanwhile clears the producer's verification state, so a stale "verified"
// answer (the transaction ended and a new one began unaware of the
// partition) no longer matches and the batch is refused. The zero value is
// Kafka's SENTINEL: it never matches.
type VerificationGuard uint64

// verificationState is Kafka's VerificationStateEntry: the guard of the
// verification in progress for a producer, when it began (it expires as a
// producer does), and the lowest sequence and latest epoch seen while
// verifying, so a higher sequence cannot be written before a lower one that
// is still retrying its verification. supportsEpochBump marks a
// Transactions V2 verification (Produce v12+): its transaction runs at the
// epoch the previous transaction's markers carry.
type verificationState struct {
	guard             VerificationGuard
	timestampMs       int64
	lowestSeq         int32
	epoch             int16
	supportsEpochBump bool
}

// maybeUpdate keeps the lowest sequence of the latest epoch, as Kafka's
// maybeUpdateLowestSequenceAndEpoch.
func (v *verificationState) maybeUpdate(seq int32, epoch int16) {
	if epoch == v.epoch && seq < v.lowestSeq {
		v.lowestSeq = seq
	}
	if epoch > v.epoch {
		v.epoch, v.lowestSeq = epoch, seq
	}
}

// HasOngoingTransaction reports whether the producer has an open transaction
// on this partition at epoch: its batches need no verification. Another
// epoch's batch does (Transactions V2 starts the next transaction at the
// bumped epoch while the previous one's markers may still be in flight),
// as Kafka's hasOngoingTransaction(producerId, epoch).
func (m *Manager) HasOngoingTransaction(producerID int64, epoch int16) bool {
	e, ok := m.producers[producerID]
	return ok && e.CurrentTxnFirstOffset >= 0 && e.ProducerEpoch == epoch
}

// MaybeStartVerification begins (or continues) verifying the producer's
// transaction before its first transactional batch here, as Kafka's
// maybeStartTransactionVerification: it returns the sentinel (0) when the
// producer's transaction is already ongoing, else the guard the append must
// carry once the coordinator has answered. seq is the batch's first sequence;
// supportsEpochBump is set for Transactions V2 requests (Produce v12+). An
// epoch below the producer's is refused with INVALID_PRODUCER_EPOCH before
// anything is asked (KAFKA-19690).
func (m *Manager) MaybeStartVerification(producerID int64, seq int32, epoch int16, supportsEpochBump bool) (VerificationGuard, error) {
	if err := m.checkStaleEpoch(producerID, epoch); err != nil {
		return 0, err
	}
	if m.HasOngoingTransaction(producerID, epoch) {
		return 0, nil
	}
	v, ok := m.verifications[producerID]
	if !ok {
		m.lastGuard++
		v = &verificationState{guard: m.lastGuard, timestampMs: m.clk.Now().UnixMilli(), lowestSeq: seq, epoch: epoch,
			supportsEpochBump: supportsEpochBump}
		m.verifications[producerID] = v
	}
	v.maybeUpdate(seq, epoch)
	return v.guard, nil
}

// checkStaleEpoch refuses a transactional batch whose epoch is below the
// producer's with INVALID_PRODUCER_EPOCH, as Kafka does before it looks at
// verification (a fenced producer learns it is fenced, not that its
// partition was not added).
func (m *Manager) checkStaleEpoch(producerID int64, epoch int16) error {
	if e, ok := m.producers[producerID]; ok && epoch < e.ProducerEpoch {
		return fmt.Errorf("%w: epoch of producer %d is %d, which is smaller than the last seen epoch %d",
			kerr.InvalidProducerEpoch, producerID, epoch, e.ProducerEpoch)
	}
	return nil
}

// keepsVerification reports whether a marker of the producer at epoch
// leaves its verification in place: under Transactions V2 the previous
// transaction's marker carries the bumped epoch the next transaction
// already verifies at, and clearing the guard then would refuse that
// transaction's first batch although the coordinator added the partition
// (KAFKA-18654). Any other transactional write spends the guard.
func (m *Manager) keepsVerification(producerID int64, markerEpoch int16) bool {
	v, ok := m.verifications[producerID]
	return ok && v.supportsEpochBump && v.epoch == markerEpoch
}

// VerificationGuardOf returns the producer's current guard, or the sentinel.
func (m *Manager) VerificationGuardOf(producerID int64) VerificationGuard {
	if v, ok := m.verifications[producerID]; ok {
		return v.guard
	}
	return 0
}

// removeExpiredVerifications drops verifications begun expirationMs ago or
// more: a producer that never appended after asking leaves nothing behind.
func (m *Manager) removeExpiredVerifications(nowMs, expirationMs int64) {
	for id, v := range m.verifications {
		if nowMs-v.timestampMs >= expirationMs {
			delete(m.verifications, id)
		}
	}
}
