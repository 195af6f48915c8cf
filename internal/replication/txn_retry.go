package replication

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

// VerificationRetry is the broker's own retry of Transactions V2's
// implicit add while the coordinator answers CONCURRENT_TRANSACTIONS
// (Kafka's add.partitions.to.txn.retry.backoff.ms and
// add.partitions.to.txn.retry.backoff.max.ms).
type VerificationRetry struct {
	// Backoff is the wait between two asks (20 ms).
	Backoff time.Duration
	// Max is how long after the first ask another may begin (100 ms; the
	// node caps it at request.timeout.ms, as Kafka does); 0 never retries.
	// The produce request's timeout caps it too.
	Max time.Duration
}

// DefaultVerificationRetry is Kafka's defaults; a zero Options.VerifyRetry
// means these.
func DefaultVerificationRetry() VerificationRetry {
	return VerificationRetry{Backoff: 20 * time.Millisecond, Max: 100 * time.Millisecond}
}

// retryConcurrentTransactions is Kafka's server-side retry of the implicit
// add (ReplicaManager's maybeRetryOnConcurrentTransactions, Produce v12+):
// the producer's next transaction begins as soon as EndTxn answers, while
// the coordinator still writes the previous one's markers and answers
// CONCURRENT_TRANSACTIONS. Refused, the producer would back off far longer
// (franz-go refreshes its metadata first), so the partitions so answered are
// asked again every Backoff until Max (or the request's timeout) has passed
// since the first ask; the last answers stand. Each attempt takes a fresh
// guard first: the previous transaction's marker clears the producer's
// verification state, so the guard taken before it no longer matches and
// the append would refuse the batch.
func (v *verification) retryConcurrentTransactions(ctx context.Context, codes map[kafka.TopicPartition]int16) map[kafka.TopicPartition]int16 {
	retry := v.rm.opts.VerifyRetry
	window := retry.Max
	if v.req.Timeout > 0 && v.req.Timeout < window {
		window = v.req.Timeout
	}
	clk := v.rm.opts.Clock
	start := clk.Now()
	for {
		var again []waitingPartition
		for _, w := range v.waiting {
			if codes[v.req.Partitions[w.i].TP] == kerr.ConcurrentTransactions.Code {
				again = append(again, w)
			}
		}
		if len(again) == 0 || clock.Since(clk, start) >= window || !sleep(ctx, clk, nil, retry.Backoff) {
			return codes
		}
		var ask []waitingPartition
		for _, w := range again {
			tp := v.req.Partitions[w.i].TP
			if v.restartGuard(w) {
				ask = append(ask, w)
				continue
			}
			// Answered here: refused (NOT_LEADER_OR_FOLLOWER...) or
			// ongoing at this epoch since (another request of the producer
			// was verified and appended): nothing to ask.
			codes[tp] = 0
		}
		if len(ask) == 0 {
			return codes
		}
		answers := v.ask(ctx, ask)
		for _, w := range ask {
			tp := v.req.Partitions[w.i].TP
			code, ok := answers[tp]
			if !ok {
				code = kerr.CoordinatorNotAvailable.Code
			}
			codes[tp] = code
		}
	}
}

// restartGuard takes partition w's verification guard again, reporting
// whether the coordinator must be asked; a partition no longer led is
// answered in the results.
func (v *verification) restartGuard(w waitingPartition) bool {
	part, err := v.rm.Partition(v.req.Partitions[w.i].TP)
	if err == nil {
		v.checks[w.i].guard, err = part.maybeStartTransactionVerification(w.producer, v.req.ProduceVersion >= 12)
	}
	if err != nil {
		v.results[w.i].AppendResult, v.done[w.i] = failedAppend(err, kafka.NoOffset), true
		return false
	}
	return v.checks[w.i].guard != 0
}
