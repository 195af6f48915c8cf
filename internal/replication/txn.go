package replication

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
)

// AppendOrigin says who appends, which decides the producer-state checks
// (Kafka's AppendOrigin).
type AppendOrigin int8

const (
	// AppendOriginClient is a produce request: epochs, sequences and, with a
	// verifier, KIP-890 verification are checked.
	AppendOriginClient AppendOrigin = iota
	// AppendOriginCoordinator is a coordinator's write (the group
	// coordinator's offsets, transactional ones included): producer epochs
	// are checked, sequences and verification are not.
	AppendOriginCoordinator
)

// TxnVerifier asks the transaction coordinator whether partitions are part
// of a producer's ongoing transaction (KIP-890: AddPartitionsToTxn v4+
// with VerifyOnly, Kafka's AddPartitionsToTxnManager). The broker
// implements it; ReplicaManager calls it before the first transactional
// batch of a producer on a partition it leads.
type TxnVerifier interface {
	// VerifyTransaction answers a Kafka error code for every partition of
	// req, 0 when the partition is in the transaction (or, with
	// AddPartitions, was added to it). Codes are the coordinator's as it
	// answered (PRODUCER_FENCED, TRANSACTION_ABORTABLE, INVALID_TXN_STATE,
	// CONCURRENT_TRANSACTIONS, ...) or, when it could not be asked,
	// COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR or NETWORK_EXCEPTION; the
	// replica manager maps them to what the producer expects. A partition
	// missing from the answer counts as COORDINATOR_NOT_AVAILABLE. It
	// returns when ctx ends, answering the partitions not yet verified.
	VerifyTransaction(ctx context.Context, req VerifyRequest) map[kafka.TopicPartition]int16
}

// VerifyRequest is one producer's verification on this broker.
type VerifyRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []kafka.TopicPartition
	// AddPartitions is Transactions V2's implicit add (Produce v12+): the
	// coordinator adds the partitions to the transaction rather than only
	// checking them (AddPartitionsToTxn v5 without VerifyOnly).
	AddPartitions bool
}

// leaderChecks are the producer-state checks of one leader append.
type leaderChecks struct {
	origin AppendOrigin
	// verify appends with commitlog.AppendVerified and guard.
	verify bool
	guard  commitlog.VerificationGuard
}

// txnProducer is the transactional producer of a partition's batches.
type txnProducer struct {
	id       int64
	epoch    int16
	firstSeq int32
}

// transactionalProducer finds the producer of the transactional batches of
// one partition's records (Kafka reads only batch headers here; records
// that do not parse are left to validation, which refuses them). ok is
// false without transactional batches; more is set when they name more
// than one producer.
func transactionalProducer(batches []byte) (p txnProducer, ok, more bool) {
	first := true
	firstSeq := int32(kafka.NoSequence)
	_, _ = records.Batches(batches, func(h records.Header, _ []byte) error {
		if first {
			// Kafka starts verification with the first batch's sequence.
			firstSeq, first = h.BaseSequence, false
		}
		if !h.HasProducerID() || !h.IsTransactional() {
			return nil
		}
		if ok && (h.ProducerID != p.id || h.ProducerEpoch != p.epoch) {
			more = true
		}
		if !ok {
			p, ok = txnProducer{id: h.ProducerID, epoch: h.ProducerEpoch}, true
		}
		return nil
	})
	p.firstSeq = firstSeq
	return p, ok, more
}

// verifyTransactions runs KIP-890's verification of a produce request
// before anything is appended (Kafka's handleProduceAppend): for each
// partition with transactional batches whose producer has no ongoing
// transaction there, it takes a verification guard and asks the verifier,
// once for all such partitions (under Transactions V2 asking again while
// the previous transaction completes, see retryConcurrentTransactions). It
// returns the checks each partition's append runs with; partitions refused
// are answered in results, with done set.
func (rm *ReplicaManager) verifyTransactions(ctx context.Context, req AppendRequest, results []PartitionAppendResult, done []bool) []leaderChecks {
	checks := make([]leaderChecks, len(req.Partitions))
	for i := range checks {
		checks[i].origin = req.Origin
	}
	if req.Origin != AppendOriginClient || rm.opts.Verifier == nil {
		return checks
	}
	v := verification{rm: rm, req: req, checks: checks, results: results, done: done}
	producers := map[[2]int64]bool{}
	for i, ap := range req.Partitions {
		checks[i].verify = true
		p, ok, more := transactionalProducer(ap.Records)
		if !ok {
			continue
		}
		producers[[2]int64{p.id, int64(p.epoch)}] = true
		if more || len(producers) > 1 {
			refuseAll(req, results, done, fmt.Errorf("transactional records contained more than one producer ID: %w", kerr.InvalidProducerIDMapping))
			return checks
		}
		v.producer = p
		v.startGuard(i, p)
	}
	if len(v.waiting) == 0 {
		return checks
	}
	if req.TransactionalID == "" {
		// Kafka verifies only requests naming a transactional id; without
		// one the guards stay unanswered and the append refuses the
		// batches with INVALID_TXN_STATE unless their transaction is
		// ongoing.
		for _, w := range v.waiting {
			checks[w.i].guard = 0
		}
		return checks
	}
	codes := v.ask(ctx, v.waiting)
	if req.ProduceVersion >= 12 {
		codes = v.retryConcurrentTransactions(ctx, codes)
	}
	for _, w := range v.waiting {
		code, ok := codes[req.Partitions[w.i].TP]
		if !ok {
			code = kerr.CoordinatorNotAvailable.Code
		}
		if code != 0 {
			results[w.i].AppendResult, done[w.i] = verificationFailed(req.Partitions[w.i].TP, code, req.ProduceVersion), true
		}
	}
	return checks
}

// verification is one produce request's verification in progress.
type verification struct {
	rm       *ReplicaManager
	req      AppendRequest
	checks   []leaderChecks
	results  []PartitionAppendResult
	done     []bool
	producer txnProducer
	// waiting are the partitions whose guard awaits the coordinator.
	waiting []waitingPartition
}

// waitingPartition is a partition of the request to verify: its index and
// its batches' producer (the first sequence is the partition's own).
type waitingPartition struct {
	i        int
	producer txnProducer
}

// startGuard takes partition i's verification guard and, unless its
// transaction is ongoing here, adds it to the partitions waiting; a
// partition this broker does not lead is answered at once.
func (v *verification) startGuard(i int, p txnProducer) {
	part, err := v.rm.Partition(v.req.Partitions[i].TP)
	if err == nil {
		v.checks[i].guard, err = part.maybeStartTransactionVerification(p, v.req.ProduceVersion >= 12)
	}
	if err != nil {
		v.results[i].AppendResult, v.done[i] = failedAppend(err, kafka.NoOffset), true
		return
	}
	if v.checks[i].guard != 0 {
		v.waiting = append(v.waiting, waitingPartition{i: i, producer: p})
	}
}

// ask asks the verifier about the partitions ws, once for all.
func (v *verification) ask(ctx context.Context, ws []waitingPartition) map[kafka.TopicPartition]int16 {
	tps := make([]kafka.TopicPartition, len(ws))
	for k, w := range ws {
		tps[k] = v.req.Partitions[w.i].TP
	}
	return v.rm.opts.Verifier.VerifyTransaction(ctx, VerifyRequest{
		TransactionalID: v.req.TransactionalID, ProducerID: v.producer.id, ProducerEpoch: v.producer.epoch,
		Partitions: tps, AddPartitions: v.req.ProduceVersion >= 12,
	})
}

func refuseAll(req AppendRequest, results []PartitionAppendResult, done []bool, err error) {
	for i := range req.Partitions {
		if !done[i] {
			results[i].AppendResult, done[i] = failedAppend(err, kafka.NoOffset), true
		}
	}
}

// maybeStartTransactionVerification takes a verification guard for the
// producer on this leader (0: its transaction is ongoing here, no
// verification needed); a follower refuses with NOT_LEADER_OR_FOLLOWER.
func (p *Partition) maybeStartTransactionVerification(tp txnProducer, supportsEpochBump bool) (commitlog.VerificationGuard, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkLeaderLocked(kafka.NoEpoch, true); err != nil {
		return 0, err
	}
	g, err := p.log.MaybeStartTransactionVerification(tp.id, tp.firstSeq, tp.epoch, supportsEpochBump)
	if err != nil {
		return 0, fmt.Errorf("partition %s: %w", p.tp, err)
	}
	return g, nil
}

// verificationFailed is the produce answer for a partition the coordinator
// did not confirm, as Kafka's AddPartitionsToTxnManager and ReplicaManager
// map it: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH to a producer,
// TRANSACTION_ABORTABLE is INVALID_TXN_STATE before Produce v11, and the
// retriable coordinator errors become NOT_ENOUGH_REPLICAS, which every
// client retries without refreshing metadata.
func verificationFailed(tp kafka.TopicPartition, code, produceVersion int16) AppendResult {
	switch {
	case code == kerr.ProducerFenced.Code:
		code = kerr.InvalidProducerEpoch.Code
	case code == kerr.TransactionAbortable.Code && produceVersion < 11:
		code = kerr.InvalidTxnState.Code
	}
	cause := kerr.ErrorForCode(code)
	msg := ""
	switch code {
	case kerr.InvalidTxnState.Code:
		msg = "Partition was not added to the transaction"
	case kerr.ConcurrentTransactions.Code, kerr.NetworkException.Code, kerr.CoordinatorLoadInProgress.Code,
		kerr.CoordinatorNotAvailable.Code, kerr.NotCoordinator.Code:
		msg = "Unable to verify the partition has been added to the transaction. Underlying error: " + errorName(cause)
		cause = kerr.NotEnoughReplicas
	}
	r := failedAppend(fmt.Errorf("partition %s: transaction verification: %w", tp, cause), kafka.NoOffset)
	if msg != "" {
		r.ErrorMessage = msg
	}
	return r
}

// errorName is a code's name as Kafka's Errors prints it.
func errorName(err error) string {
	if ke, ok := err.(*kerr.Error); ok {
		return ke.Message
	}
	return err.Error()
}
