package replication

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// scriptedVerifier answers its n-th call with answers[n] for every
// partition (the last answer repeats) and runs onCall first; after an
// answer of CONCURRENT_TRANSACTIONS it moves the manual clock by backoff
// once the replica manager waits on it, standing in for time passing.
type scriptedVerifier struct {
	f       *fixture
	backoff time.Duration
	answers []int16
	onCall  func(n int)

	mu    sync.Mutex
	calls []VerifyRequest
	// advancing are the clock movers still waiting.
	advancing sync.WaitGroup
}

func (v *scriptedVerifier) VerifyTransaction(_ context.Context, req VerifyRequest) map[kafka.TopicPartition]int16 {
	v.mu.Lock()
	n := len(v.calls)
	v.calls = append(v.calls, req)
	v.mu.Unlock()
	if v.onCall != nil {
		v.onCall(n)
	}
	code := v.answers[min(n, len(v.answers)-1)]
	if code == kerr.ConcurrentTransactions.Code {
		armed := v.f.clk.Waiters()
		v.advancing.Add(1)
		go func() {
			defer v.advancing.Done()
			v.f.clk.BlockUntil(armed + 1)
			v.f.clk.Advance(v.backoff)
		}()
	}
	out := map[kafka.TopicPartition]int16{}
	for _, tp := range req.Partitions {
		out[tp] = code
	}
	return out
}

func (v *scriptedVerifier) callCount() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.calls)
}

func newScriptedFixture(t *testing.T, answers ...int16) (*fixture, *scriptedVerifier) {
	v := &scriptedVerifier{backoff: DefaultVerificationRetry().Backoff, answers: answers}
	v.f = newFixtureWith(t, nil, func(o *Options) { o.Verifier = v })
	t.Cleanup(func() {
		// The last CONCURRENT_TRANSACTIONS answer may have been the last
		// ask: its mover still waits for a retry that never came.
		stop := v.f.clk.NewTimer(time.Hour)
		v.advancing.Wait()
		stop.Stop()
	})
	return v.f, v
}

// TestConcurrentTransactionsRetriedWithFreshGuard: under Transactions V2
// the producer's next transaction (epoch 2) begins while the coordinator
// still writes the previous one's marker; the coordinator answers
// CONCURRENT_TRANSACTIONS, the marker lands meanwhile (clearing the
// verification state the first guard named), and the broker asks again
// with a fresh guard, so the batch is appended in the new transaction
// rather than refused.
func TestConcurrentTransactionsRetriedWithFreshGuard(t *testing.T) {
	f, v := newScriptedFixture(t, 0, kerr.ConcurrentTransactions.Code, 0)
	res := produceTxn(t, f, 12, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 1, 0, 2)})
	wantCode(t, "first transaction", res[0].Err, nil)
	v.onCall = func(n int) {
		if n == 1 { // the previous transaction's marker, written with the bumped epoch
			m := marker(7, 2, true, 0, tp("t", 0))
			m.TransactionVersion = 2
			mustMarkers(t, f, m)
		}
	}
	res = produceTxn(t, f, 12, AppendPartition{TP: tp("t", 0), Records: txnRecords(t, 7, 2, 0, 1)})
	wantCode(t, "next transaction's first batch", res[0].Err, nil)
	if res[0].FirstOffset != 3 {
		t.Fatalf("next transaction's batch at offset %d, want 3 (after 2 records and the marker)", res[0].FirstOffset)
	}
	if n := v.callCount(); n != 3 {
		t.Fatalf("coordinator asked %d times, want 3 (the first transaction, then CONCURRENT_TRANSACTIONS and 0)", n)
	}
	v.mu.Lock()
	last := v.calls[2]
	v.mu.Unlock()
	if !last.AddPartitions || last.ProducerEpoch != 2 || len(last.Partitions) != 1 || last.Partitions[0] != tp("t", 0) {
		t.Fatalf("retried verification %+v, want the implicit add of t-0 at epoch 2", last)
	}
	st := mustPartition(t, f, tp("t", 0)).State()
	if st.LogEndOffset != 4 {
		t.Fatalf("log end offset %d, want 4", st.LogEndOffset)
	}
}

// TestConcurrentTransactionsRetryBounded: the broker asks again every
// add.partitions.to.txn.retry.backoff.ms until
// add.partitions.to.txn.retry.backoff.max.ms (or the request's timeout,
// when shorter) has passed since the first ask, then answers
// NOT_ENOUGH_REPLICAS as without the retry; before Produce v12 (no
// implicit add) it does not retry at all.
func TestConcurrentTransactionsRetryBounded(t *testing.T) {
	cases := []struct {
		name    string
		version int16
		timeout time.Duration
		asks    int
	}{
		{"max.ms", 12, 5 * time.Second, 6},                // at 0, 20, 40, 60, 80 and 100 ms
		{"request timeout", 12, 50 * time.Millisecond, 4}, // the last at 60 ms
		{"before v12", 11, 5 * time.Second, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, v := newScriptedFixture(t, kerr.ConcurrentTransactions.Code)
			start := f.clk.Now()
			res := f.rm.AppendRecords(t.Context(), AppendRequest{RequiredAcks: -1, Timeout: c.timeout,
				ProduceVersion: c.version, TransactionalID: "tx",
				Partitions: []AppendPartition{{TP: tp("t", 0), Records: txnRecords(t, 7, 0, 0, 1)}}})
			wantCode(t, c.name, res[0].Err, kerr.NotEnoughReplicas)
			if n := v.callCount(); n != c.asks {
				t.Fatalf("coordinator asked %d times in %v, want %d", n, f.clk.Now().Sub(start), c.asks)
			}
			if st := mustPartition(t, f, tp("t", 0)).State(); st.LogEndOffset != 0 {
				t.Fatalf("a refused batch was appended: log end offset %d", st.LogEndOffset)
			}
		})
	}
}
