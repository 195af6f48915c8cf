package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// endTxnLoopConfig is one EndTxn latency loop: Warm transactions not measured (or as many
// as fit in a quarter of MaxSeconds), then Measure transactions measured, unless the whole
// loop reaches MaxSeconds first.
type endTxnLoopConfig struct {
	Bootstrap  string
	Topic      string
	TxnID      string
	Warm       int
	Measure    int
	MaxSeconds int
}

// endTxnRun is what the loop measured.
type endTxnRun struct {
	Warmed   int             // warm-up transactions committed
	Commits  []time.Duration // each measured EndTransaction(commit) call
	Elapsed  time.Duration   // from the first measured begin to the last measured commit
	TimedOut bool            // the loop stopped at MaxSeconds
	Wire     requestCounts   // requests the client sent during the measured transactions
}

// Kafka's API keys of the requests the loop counts.
const (
	keyProduce = 0
	keyEndTxn  = 26
)

// requestCounts are the requests a client sent, and EndTxn's round trips on the wire.
type requestCounts struct {
	Produce   int
	EndTxn    int
	EndTxnRTT []time.Duration
}

// requestTally counts requests while on. It is a kgo hook (HookBrokerE2E), called from the
// client's goroutines.
type requestTally struct {
	mu sync.Mutex
	on bool
	c  requestCounts
}

func (t *requestTally) OnBrokerE2E(_ kgo.BrokerMetadata, key int16, e2e kgo.BrokerE2E) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.on {
		return
	}
	switch key {
	case keyProduce:
		t.c.Produce++
	case keyEndTxn:
		t.c.EndTxn++
		if e2e.Err() == nil {
			t.c.EndTxnRTT = append(t.c.EndTxnRTT, e2e.DurationE2E())
		}
	}
}

func (t *requestTally) set(on bool) {
	t.mu.Lock()
	t.on = on
	t.mu.Unlock()
}

// runEndTxnLoop runs small transactions one after another with franz-go, each a begin,
// one 1 KiB record produced and acknowledged, and a commit, and times the commit: with the
// record already acknowledged, EndTransaction is the EndTxn round trip (plus the client's
// retries of CONCURRENT_TRANSACTIONS, counted in Wire), what the Java client's
// commitTransaction waits for. Under Transactions V2 the next transaction's first produce
// waits until the previous one's markers are written; that shows in the rate, not in the
// commit times.
func runEndTxnLoop(ctx context.Context, cfg endTxnLoopConfig) (endTxnRun, error) {
	limit := time.Duration(cfg.MaxSeconds) * time.Second
	ctx, cancel := context.WithTimeout(ctx, limit+time.Minute)
	defer cancel()
	tally := &requestTally{}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds(cfg.Bootstrap)...),
		kgo.TransactionalID(cfg.TxnID),
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.ProducerLinger(0),
		kgo.WithHooks(tally),
	)
	if err != nil {
		return endTxnRun{}, fmt.Errorf("transactional client: %w", err)
	}
	defer cl.Close()
	value := make([]byte, recordSize)
	var run endTxnRun
	start := time.Now()
	for run.Warmed < cfg.Warm && time.Since(start) < limit/4 {
		if _, err := oneTxn(ctx, cl, value); err != nil {
			return run, fmt.Errorf("warm-up transaction %d: %w", run.Warmed+1, err)
		}
		run.Warmed++
	}
	tally.set(true)
	t0 := time.Now()
	for len(run.Commits) < cfg.Measure {
		if time.Since(start) >= limit {
			run.TimedOut = true
			break
		}
		d, err := oneTxn(ctx, cl, value)
		if err != nil {
			return run, fmt.Errorf("transaction %d after %d warm-up: %w", len(run.Commits)+1, run.Warmed, err)
		}
		run.Commits = append(run.Commits, d)
	}
	run.Elapsed = time.Since(t0)
	tally.set(false)
	run.Wire = tally.snapshot()
	if len(run.Commits) == 0 {
		return run, fmt.Errorf("no transaction measured within %d s (%d warm-up transactions)", cfg.MaxSeconds, run.Warmed)
	}
	return run, nil
}

// oneTxn begins a transaction, produces one record and waits for its acknowledgement, then
// commits, and returns how long the commit took.
func oneTxn(ctx context.Context, cl *kgo.Client, value []byte) (time.Duration, error) {
	if err := cl.BeginTransaction(); err != nil {
		return 0, fmt.Errorf("begin: %w", err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
		return 0, fmt.Errorf("produce: %w", err)
	}
	t0 := time.Now()
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return time.Since(t0), nil
}

func (t *requestTally) snapshot() requestCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	return requestCounts{Produce: t.c.Produce, EndTxn: t.c.EndTxn, EndTxnRTT: slices.Clone(t.c.EndTxnRTT)}
}

func (r endTxnRun) commitMs() []float64 { return millis(r.Commits) }

func (r endTxnRun) ratePerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(len(r.Commits)) / r.Elapsed.Seconds()
}

// describe is the loop's note for the report: how many transactions, how it ended, the
// requests per transaction (above 1 means the client retried) and EndTxn's own round trip
// on the wire against the EndTransaction call.
func (r endTxnRun) describe(cfg endTxnLoopConfig) string {
	n := len(r.Commits)
	out := fmt.Sprintf("%d of %d transactions measured after %d warm-up, in %.1f s", n, cfg.Measure, r.Warmed, r.Elapsed.Seconds())
	if r.TimedOut {
		out += fmt.Sprintf(" (stopped at the %d s limit)", cfg.MaxSeconds)
	}
	if n == 0 {
		return out
	}
	out += fmt.Sprintf("; per transaction %.2f Produce and %.2f EndTxn requests", float64(r.Wire.Produce)/float64(n), float64(r.Wire.EndTxn)/float64(n))
	calls := r.commitMs()
	out += fmt.Sprintf("; EndTransaction p50 %.2f, p99 %.2f, max %.2f ms", percentile(calls, 50), percentile(calls, 99), slices.Max(calls))
	if rtt := millis(r.Wire.EndTxnRTT); len(rtt) > 0 {
		out += fmt.Sprintf("; EndTxn on the wire p50 %.2f, p99 %.2f ms", percentile(rtt, 50), percentile(rtt, 99))
	}
	return out
}

func millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of vs: the smallest value at
// least p% of the values are at or below. NaN for no values.
func percentile(vs []float64, p float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}
