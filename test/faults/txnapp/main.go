// Command txnapp is the consume-transform-produce application of the
// transactions fault test (test/faults, TestTransactionsSurviveKills): a
// franz-go GroupTransactSession reads -input in group -group and writes
// each record's value, transformed, to the same partition of -output, in a
// transaction that also commits the group's offsets. Each output record's
// value is "<input value>|<attempt>", the attempt being "<instance>.<n>"
// (the n-th transaction this process began), so the test can tell which
// transaction wrote it. The outcome of an attempt is printed on stdout once
// known, one line each:
//
//	txn commit <attempt> <records>
//	txn abort <attempt> <records> <why>
//	txn unknown <attempt> <records> <End's error>
//
// An attempt without one died with the process. Before End it prints
// "txn ending <attempt> <records>"; an attempt with no such line never
// asked to commit. After an unknown outcome (End's errors are final) the
// session is replaced by a new one, which prints "txn reset <why>".
//
// While the file -slow exists a transaction holds at most 10 records and
// waits 50 ms before it ends; without it, up to 500 and no wait, to drain
// the input. While the file -hold exists, a transaction whose records are
// written prints "txn holding <attempt> <records>" and waits, for the test
// to kill the process inside it. SIGTERM ends it between transactions.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type config struct {
	brokers, group, txnID, input, output, slowFile, holdFile string
	instance                                                 int
	txnTimeout                                               time.Duration
	logLevel                                                 string
}

func main() {
	var c config
	flag.StringVar(&c.brokers, "brokers", "", "bootstrap brokers, comma separated")
	flag.StringVar(&c.group, "group", "txnapp", "consumer group")
	flag.StringVar(&c.txnID, "txn-id", "txnapp", "transactional id")
	flag.StringVar(&c.input, "input", "", "input topic")
	flag.StringVar(&c.output, "output", "", "output topic")
	flag.StringVar(&c.slowFile, "slow", "", "while this file exists, small transactions with a pause")
	flag.StringVar(&c.holdFile, "hold", "", "while this file exists, hold each transaction open once its records are written")
	flag.IntVar(&c.instance, "instance", 0, "this process's number, the first part of every attempt")
	flag.DurationVar(&c.txnTimeout, "txn-timeout", 10*time.Second, "transaction.timeout.ms")
	flag.StringVar(&c.logLevel, "log-level", "warn", "franz-go's log level on stderr: debug, info, warn or error")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	a := &app{cfg: c}
	// A session that fails is replaced by a new one (a new producer epoch),
	// as a supervised service would restart.
	for ctx.Err() == nil {
		if err := a.run(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(os.Stderr, "txnapp: session ended: %v; starting a new one\n", err)
			fmt.Printf("txn reset %q\n", err.Error())
		}
	}
}

type app struct {
	cfg config
	seq int
}

// run is one session: it fences the transactional id's previous producer
// (aborting its open transaction, as Java's initTransactions), then
// transacts until ctx ends or a transaction fails beyond repair.
func (a *app) run(ctx context.Context) error {
	sess, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(strings.Split(a.cfg.brokers, ",")...),
		kgo.TransactionalID(a.cfg.txnID),
		kgo.TransactionTimeout(a.cfg.txnTimeout),
		kgo.ConsumerGroup(a.cfg.group),
		kgo.InstanceID(a.cfg.group+"-member"),
		kgo.SessionTimeout(6*time.Second),
		kgo.RebalanceTimeout(10*time.Second),
		kgo.ConsumeTopics(a.cfg.input),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.WithLogger(kgo.BasicLogger(os.Stderr, logLevel(a.cfg.logLevel), func() string {
			return time.Now().UTC().Format("15:04:05.000 ")
		})),
	)
	if err != nil {
		return fmt.Errorf("new session: %w", err)
	}
	defer sess.Close()
	if _, _, err := sess.Client().ProducerID(ctx); err != nil {
		return fmt.Errorf("init producer id: %w", err)
	}
	for ctx.Err() == nil {
		if err := a.transact(ctx, sess); err != nil {
			return err
		}
	}
	return nil
}

// transact polls and, if records came, runs one transaction over them.
func (a *app) transact(ctx context.Context, sess *kgo.GroupTransactSession) error {
	slow := a.slow()
	recs := poll(ctx, sess, slow)
	if len(recs) == 0 {
		return nil
	}
	a.seq++
	attempt := fmt.Sprintf("%d.%d", a.cfg.instance, a.seq)
	if err := sess.Begin(); err != nil {
		return fmt.Errorf("begin %s: %w", attempt, err)
	}
	// The transaction's own steps never see ctx: SIGTERM lets it end.
	tctx := context.WithoutCancel(ctx)
	failed, err := a.produce(tctx, sess, recs, attempt)
	if err != nil {
		return err
	}
	if slow {
		time.Sleep(50 * time.Millisecond) // the work a real transform does, and a window for kills
	}
	if exists(a.cfg.holdFile) {
		// The test kills the process here, inside a transaction whose
		// records are written: it must end aborted.
		fmt.Printf("txn holding %s %d\n", attempt, len(recs))
		for exists(a.cfg.holdFile) && ctx.Err() == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	return end(tctx, sess, attempt, len(recs), failed)
}

// poll returns the next records, at most 10 when slow.
func poll(ctx context.Context, sess *kgo.GroupTransactSession, slow bool) []*kgo.Record {
	limit := 500
	if slow {
		limit = 10
	}
	fetches := sess.PollRecords(ctx, limit)
	if ctx.Err() != nil {
		return nil
	}
	fetches.EachError(func(topic string, p int32, err error) {
		fmt.Fprintf(os.Stderr, "txnapp: fetch %s-%d: %v\n", topic, p, err)
	})
	return fetches.Records()
}

// produce writes each record's transformed value to the output and waits
// for them all; failed is the first record's failure.
func (a *app) produce(ctx context.Context, sess *kgo.GroupTransactSession, recs []*kgo.Record, attempt string) (failed, err error) {
	var mu sync.Mutex
	for _, r := range recs {
		out := &kgo.Record{Topic: a.cfg.output, Partition: r.Partition, Value: fmt.Appendf(nil, "%s|%s", r.Value, attempt)}
		sess.Produce(ctx, out, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil && failed == nil {
				failed = err
			}
		})
	}
	if err := sess.Client().Flush(ctx); err != nil {
		return nil, fmt.Errorf("flush %s: %w", attempt, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return failed, nil
}

// end commits the transaction, or aborts it when a record failed, and
// prints the outcome.
func end(ctx context.Context, sess *kgo.GroupTransactSession, attempt string, n int, failed error) error {
	try, why := kgo.TryCommit, ""
	if failed != nil {
		try, why = kgo.TryAbort, "produce failed: "+failed.Error()
	}
	fmt.Printf("txn ending %s %d\n", attempt, n)
	committed, err := sess.End(ctx, try)
	switch {
	case err != nil:
		// Perhaps committed, perhaps aborted (End also answers the
		// offsets' failure after an abort that succeeded): the test
		// decides by what is visible.
		fmt.Printf("txn unknown %s %d %q\n", attempt, n, err.Error())
		return fmt.Errorf("end %s: %w", attempt, err)
	case committed:
		fmt.Printf("txn commit %s %d\n", attempt, n)
	default:
		if try == kgo.TryCommit {
			why = "End could not commit (a rebalance, the offsets or the heartbeat)"
		}
		fmt.Printf("txn abort %s %d %q\n", attempt, n, why)
	}
	return nil
}

func (a *app) slow() bool { return exists(a.cfg.slowFile) }

func exists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return err == nil
}

func logLevel(name string) kgo.LogLevel {
	switch name {
	case "debug":
		return kgo.LogLevelDebug
	case "info":
		return kgo.LogLevelInfo
	case "error":
		return kgo.LogLevelError
	default:
		return kgo.LogLevelWarn
	}
}
