package commitlog

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/commitlog/producerstate"
	"github.com/sluice-io/sluice/internal/records"
)

// VerificationGuard names one KIP-890 verification of a producer's
// transaction on this log; 0 is the sentinel (see producerstate).
type VerificationGuard = producerstate.VerificationGuard

// MaybeStartTransactionVerification begins verifying a producer's
// transaction before its first transactional batch (Kafka's
// UnifiedLog.maybeStartTransactionVerification): it returns 0 when the
// producer's transaction is already ongoing here (no verification needed),
// else the guard to append with once the coordinator confirmed the
// partition is in the transaction. seq is the batch's first sequence;
// supportsEpochBump is set for Transactions V2 (Produce v12+). A stale
// epoch is refused with INVALID_PRODUCER_EPOCH.
func (l *Log) MaybeStartTransactionVerification(producerID int64, seq int32, epoch int16, supportsEpochBump bool) (VerificationGuard, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.producers.MaybeStartVerification(producerID, seq, epoch, supportsEpochBump)
}

// AppendVerified is Append with transaction verification on (Kafka's
// transaction.partition.verification.enable): a transactional batch of a
// producer with no ongoing transaction is refused with INVALID_TXN_STATE
// unless guard is the one MaybeStartTransactionVerification gave and no
// marker or transactional batch of the producer was written since.
func (l *Log) AppendVerified(batches []byte, leaderEpoch int32, guard VerificationGuard) (AppendInfo, error) {
	return l.appendAsLeader(batches, leaderEpoch, appendChecks{origin: producerstate.OriginClient, verify: true, guard: guard})
}

// TxnMarker is a transaction marker to write (one WriteTxnMarkers entry's
// part for this partition).
type TxnMarker struct {
	ProducerID    int64
	ProducerEpoch int16
	// Commit is true for COMMIT, false for ABORT.
	Commit           bool
	CoordinatorEpoch int32
	// TxnVersion is the marker's transaction version (WriteTxnMarkers v2+,
	// KIP-890): from 2 the marker's epoch must be above the producer's.
	TxnVersion int16
}

// AppendTxnMarker writes a COMMIT or ABORT control batch for a producer, as
// the transaction coordinator's write (Kafka's AppendOrigin.COORDINATOR): the
// producer epoch is checked (INVALID_PRODUCER_EPOCH) and a coordinator epoch
// older than the producer's last marker's is TRANSACTION_COORDINATOR_FENCED.
// The marker ends the producer's transaction, so the last stable offset
// moves once the high watermark passes it, and an abort is added to the
// transaction index.
func (l *Log) AppendTxnMarker(m TxnMarker, leaderEpoch int32) (AppendInfo, error) {
	opts := records.BuilderOptions{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
		BaseSequence: -1, LogAppendTimeMs: -1}
	batch, err := records.BuildEndTxnMarker(opts, m.Commit, m.CoordinatorEpoch, l.clk.Now().UnixMilli())
	if err != nil {
		return AppendInfo{}, fmt.Errorf("build transaction marker for %s: %w", l.tp, err)
	}
	return l.appendAsLeader(batch, leaderEpoch, appendChecks{origin: producerstate.OriginCoordinator, markerVersion: m.TxnVersion})
}

// ActiveProducers returns the state of every producer the log knows, by
// producer id (DescribeProducers).
func (l *Log) ActiveProducers() []producerstate.Entry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	ids := l.mu.producers.ProducerIDs()
	out := make([]producerstate.Entry, 0, len(ids))
	for _, id := range ids {
		if e, ok := l.mu.producers.Entry(id); ok {
			out = append(out, e)
		}
	}
	return out
}
