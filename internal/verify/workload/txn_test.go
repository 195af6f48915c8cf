package workload

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// TestTxnCommittedReadOnceAbortedNever runs the transactional workload
// for 10 s against a one-node in-process cluster, then the read_committed
// final read, and checks the history: every send and transaction ended
// once, every value of a committed transaction read exactly once by the
// final read, no value of an aborted one read by anyone, a transaction of
// unknown outcome all or nothing.
func TestTxnCommittedReadOnceAbortedNever(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{Nodes: 1, Overrides: map[string]string{
		"transaction.state.log.replication.factor": "1",
		"transaction.state.log.min.isr":            "1",
		"transaction.state.log.num.partitions":     "3",
		"offsets.topic.num.partitions":             "3",
		"group.initial.rebalance.delay.ms":         "0",
		"group.min.session.timeout.ms":             "1000",
	}})
	cfg := Config{Brokers: c.RunningBrokerAddrs(), Topic: "txn", Partitions: 4, ReplicationFactor: 1,
		Producers: 2, Consumers: 2, Rate: 200, SessionTimeout: 4 * time.Second,
		DeliveryTimeout: 5 * time.Second, Log: txnTestLogger()}
	rec := history.NewRecorder(time.Now, nil)
	txnRunFor(t, 20*time.Second, func(ctx context.Context) error { return CreateTopic(ctx, cfg) })
	start := time.Now()
	txnRunFor(t, 10*time.Second, func(ctx context.Context) error { return Txn(ctx, cfg, rec) })
	if d := time.Since(start); d > 10*time.Second+2*txnEndTimeout+cfg.DeliveryTimeout+leaveTimeout {
		t.Errorf("Txn took %v to stop", d)
	}
	txnRunFor(t, 20*time.Second, func(ctx context.Context) error { return FinalRead(ctx, cfg, rec) })

	s := summarizeTxns(t, rec.Ops())
	t.Logf("transactions: %v; values acknowledged in committed ones: %d; final reads: %d; consumer polls: %d",
		s.ends, s.committedValues(), len(s.finalReads), s.consumerPolls)
	if s.ends[history.TxnCommit] < 20 || s.ends[history.TxnAbort] < 3 {
		t.Errorf("transactions ended %v; want at least 20 commits and 3 aborts in 10 s", s.ends)
	}
	if s.consumerPolls == 0 {
		t.Error("the read_committed consumers polled nothing")
	}
	s.check(t)
}

// txnTestLogger logs the run to stderr when TXN_TEST_LOG is set.
func txnTestLogger() *slog.Logger {
	if os.Getenv("TXN_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func txnRunFor(t *testing.T, d time.Duration, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := fn(ctx); err != nil {
		t.Fatal(err)
	}
}

// txnSummary is what the test's check needs of a history.
type txnSummary struct {
	ends          map[history.Kind]int    // transactions by how they ended
	endOf         map[string]history.Kind // txn → TxnCommit, TxnAbort or Info
	values        map[string][]string     // txn → its acknowledged values
	valueTxn      map[string]string       // value → txn
	finalReads    map[string]int          // value → times the final read read it
	readers       map[string][]string     // value → processes that read it
	consumerPolls int
}

func summarizeTxns(t *testing.T, ops []history.Op) *txnSummary {
	t.Helper()
	s := &txnSummary{ends: map[history.Kind]int{}, endOf: map[string]history.Kind{}, values: map[string][]string{},
		valueTxn: map[string]string{}, finalReads: map[string]int{}, readers: map[string][]string{}}
	begun, outcome := map[string]bool{}, map[string]int{}
	for _, op := range ops {
		switch op.Kind {
		case history.TxnBegin:
			begun[op.Txn] = true
		case history.Send:
			s.valueTxn[op.Value] = op.Txn
			outcome[op.Value] += 0
		case history.Ack, history.Fail, history.Info:
			if op.Value == "" {
				s.end(t, op)
				continue
			}
			outcome[op.Value]++
			if op.Kind == history.Ack {
				s.values[op.Txn] = append(s.values[op.Txn], op.Value)
			}
		case history.TxnCommit, history.TxnAbort:
			s.end(t, op)
		case history.Poll:
			s.readers[op.Value] = append(s.readers[op.Value], op.Process)
			if op.Process == finalProcess {
				s.finalReads[op.Value]++
			} else {
				s.consumerPolls++
			}
		}
	}
	for v, n := range outcome {
		if n != 1 {
			t.Errorf("send of %s ended %d times, want once", v, n)
		}
	}
	for txn := range begun {
		if _, ok := s.endOf[txn]; !ok {
			t.Errorf("transaction %s never ended", txn)
		}
	}
	return s
}

func (s *txnSummary) end(t *testing.T, op history.Op) {
	if _, dup := s.endOf[op.Txn]; dup {
		t.Errorf("transaction %s ended twice (again as %s)", op.Txn, op)
	}
	s.endOf[op.Txn] = op.Kind
	s.ends[op.Kind]++
}

// check: committed values read once by the final read, aborted ones by
// nobody, unknown transactions all or nothing.
func (s *txnSummary) check(t *testing.T) {
	t.Helper()
	for v, txn := range s.valueTxn {
		if s.endOf[txn] == history.TxnAbort && len(s.readers[v]) > 0 {
			t.Errorf("%s of aborted transaction %s read by %v", v, txn, s.readers[v])
		}
	}
	for txn, vals := range s.values {
		n := 0
		for _, v := range vals {
			if s.finalReads[v] > 0 {
				n++
			}
			if s.finalReads[v] > 1 || (s.endOf[txn] == history.TxnCommit && s.finalReads[v] != 1) {
				t.Errorf("%s of %s transaction %s read %d times by the final read, want once", v, s.endOf[txn], txn, s.finalReads[v])
			}
		}
		if s.endOf[txn] == history.Info && n != 0 && n != len(vals) {
			t.Errorf("transaction %s of unknown outcome: the final read holds %d of its %d values", txn, n, len(vals))
		}
	}
}

func (s *txnSummary) committedValues() int {
	n := 0
	for txn, vals := range s.values {
		if s.endOf[txn] == history.TxnCommit {
			n += len(vals)
		}
	}
	return n
}
