package faults

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

const (
	txnInput      = "txn-input"
	txnOutput     = "txn-output"
	txnPartitions = 6
	// txnOffsetsPartitions is offsets.topic.num.partitions.
	txnOffsetsPartitions = 6
	// txnAppID is the application's transactional id and group.
	txnAppID = "txnapp"
	// txnTimeout is the application's transaction.timeout.ms.
	txnTimeout = 10 * time.Second
	// txnSentinel ends each output partition for the read-back.
	txnSentinel = "end|sentinel"
)

// TestTransactionsSurviveKills is issue 15's fault test: 3 combined nodes,
// topics of 6 partitions with RF 3 and min.insync.replicas 2, and a
// consume-transform-produce application (test/faults/txnapp: a franz-go
// GroupTransactSession in its own process) reading an input topic
// pre-filled with unique values and writing each, tagged with its
// transaction attempt, to the same partition of an output topic,
// committing its offsets in the transaction. While it runs, the test kill
// -9s the transaction coordinator's broker, then a leader of an output
// partition that is not the coordinator, each time also killing the
// application while the broker is down, then the application alone, whose
// open transaction nobody fences: the coordinator must abort it on its
// timeout before a new instance starts. The application is always killed
// inside a transaction whose records are written (it holds one open for
// the test). Each broker comes back and every ISR is complete before the
// next fault. The short form does this once (two broker kills, three
// application kills); the long form (SLUICE_FAULTS_LONG=1) five times.
//
// Afterwards, with the application stopped, a read_committed reader must
// find every input value's output exactly once (lost 0, duplicated 0), no
// record of a transaction the application saw abort or was killed inside,
// nor of a transaction only partly visible (aborted-visible 0), every
// transaction the application saw commit, and no hanging transaction: the
// coordinators list none Ongoing or preparing, DescribeProducers shows no
// open transaction on the output topic or __consumer_offsets, and the
// read_committed reader reaches the end of every output partition. It
// prints the transactions committed and aborted with those counts.
func TestTransactionsSurviveKills(t *testing.T) {
	rounds, inputs := 1, 20000
	if os.Getenv("SLUICE_FAULTS_LONG") != "" {
		rounds, inputs = 5, 100000
	}
	c, addrs, adm := startTxnCluster(t)
	prefillInput(t, addrs, inputs)
	app := newTxnApp(t, addrs)
	app.start()
	app.awaitCommits(t, 5, 60*time.Second)
	for r := range rounds {
		coord := txnCoordinator(t, adm)
		killBrokerAndApp(t, c, adm, app, coord, fmt.Sprintf("round %d: the transaction coordinator", r+1))
		// The coordinator may have moved with the kill.
		leader := outputLeaderOtherThan(t, adm, txnCoordinator(t, adm), r)
		killBrokerAndApp(t, c, adm, app, leader, fmt.Sprintf("round %d: a leader of %s, not the coordinator", r+1, txnOutput))
		before := app.outcomes().commits()
		held := app.kill()
		t.Logf("%s round %d: kill -9 the application alone (%d transactions committed), inside transaction %s; "+
			"no new instance until the coordinator aborts it", stamp(), r+1, before, held)
		awaitTimedOutAbort(t, adm)
		app.start()
		app.awaitCommits(t, before+3, 60*time.Second)
	}
	app.drain(t, adm, 120*time.Second)
	if err := app.stop(); err != nil {
		t.Errorf("application stop: %v", err)
	}
	hanging := hangingTransactions(t, adm)
	writeSentinels(t, addrs)
	committed := readOutput(t, addrs, kgo.ReadCommitted())
	all := readOutput(t, addrs, kgo.ReadUncommitted())
	seen := app.outcomes()
	got := judgeTransactions(inputs, committed, all, seen)
	t.Logf("faults: %d broker kills, %d application kills; application sessions reset %d times",
		2*rounds, 3*rounds, seen.resets)
	t.Logf("transactions: committed %d, aborted %d (the application saw %d commit, %d abort, %d end unknown, and was killed inside %d)",
		got.committed, got.aborted, len(seen.commit), len(seen.abort), len(seen.unknown), len(seen.killedInside))
	t.Logf("lost %d, duplicated %d, aborted-visible %d (of them partly visible transactions %d), commits not visible %d, unexpected outputs %d, hanging transactions %d",
		got.lost, got.duplicated, got.abortedVisible, got.torn, got.commitNotVisible, got.unexpected, hanging)
	if got.lost+got.duplicated+got.abortedVisible+got.commitNotVisible+got.unexpected+hanging != 0 {
		t.Fatalf("lost %d, duplicated %d, aborted-visible %d, commits not visible %d, unexpected %d, hanging %d: want 0",
			got.lost, got.duplicated, got.abortedVisible, got.commitNotVisible, got.unexpected, hanging)
	}
	if killed := len(seen.killedInside); got.aborted < killed {
		t.Errorf("%d transactions aborted, fewer than the %d the application was killed inside", got.aborted, killed)
	}
}

// startTxnCluster starts the 3 combined nodes of the fault tests with a
// small __transaction_state and the input and output topics.
func startTxnCluster(t *testing.T) (*testcluster.Processes, []string, *kadm.Client) {
	c := testcluster.StartProcesses(t, binaryPath, testcluster.Options{Nodes: 3, Overrides: map[string]string{
		"broker.session.timeout.ms":        strconv.Itoa(sessionTimeoutMs),
		"broker.heartbeat.interval.ms":     "500",
		"replica.lag.time.max.ms":          strconv.Itoa(lagMaxMs),
		"min.insync.replicas":              "2",
		"offsets.topic.replication.factor": "3",
		"offsets.topic.num.partitions":     strconv.Itoa(txnOffsetsPartitions),
		// RF 3 and min.isr 2 are Kafka's defaults for __transaction_state;
		// few partitions keep the elections of each fault short.
		"transaction.state.log.num.partitions": "3",
		// An open transaction of a killed application that nobody fences
		// is aborted within a second of its timeout.
		"transaction.abort.timed.out.transaction.cleanup.interval.ms": "1000",
	}})
	addrs := c.Layout.BrokerAddrs()
	adm := admin(t, addrs)
	for _, topic := range []string{txnInput, txnOutput} {
		testutil.EventuallyNoError(t, 30*time.Second, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := adm.CreateTopic(ctx, txnPartitions, 3, nil, topic)
			if err != nil {
				return err
			}
			if errors.Is(resp.Err, kerr.TopicAlreadyExists) {
				return nil
			}
			return resp.Err
		}, "create topic %s", topic)
	}
	return c, addrs, adm
}

// inputValue is the n-th input value.
func inputValue(n int) string { return fmt.Sprintf("v%07d", n) }

// prefillInput writes n unique values over the input topic's partitions.
func prefillInput(t *testing.T, addrs []string, n int) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(txnInput),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = &kgo.Record{Partition: int32(i % txnPartitions), Value: []byte(inputValue(i))}
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("prefill %s: %v", txnInput, err)
	}
}

// killBrokerAndApp kill -9s node id, waits until the application commits
// through the survivors, kill -9s the application and starts it again
// while the node is still down, waits for its commits, then restarts the
// node and waits until every ISR is complete.
func killBrokerAndApp(t *testing.T, c *testcluster.Processes, adm *kadm.Client, app *txnApp, id int32, what string) {
	t.Helper()
	idx := int(id) - 1
	if app.remaining(t, adm) == 0 {
		t.Fatalf("the application had processed every input before the fault on %s: raise the input count", what)
	}
	before := app.outcomes().commits()
	start := time.Now()
	t.Logf("%s fault: kill -9 node %d, %s (%d transactions committed)", stamp(), id, what, before)
	c.Kill(idx)
	app.awaitCommits(t, before+3, 60*time.Second)
	rode := time.Since(start)
	before = app.outcomes().commits()
	held := app.kill()
	t.Logf("%s   committing again after %s; kill -9 the application while node %d is down, inside transaction %s",
		stamp(), rode.Round(time.Millisecond), id, held)
	app.start()
	app.awaitCommits(t, before+3, 60*time.Second)
	t.Logf("%s   the new application instance commits; restart node %d", stamp(), id)
	c.Start(idx)
	awaitTxnInSync(t, adm, 90*time.Second)
}

// awaitTimedOutAbort waits until the coordinator has aborted the
// application's open transaction, which no producer will end, once its
// timeout passed (transaction.abort.timed.out.transaction.cleanup.interval.ms).
func awaitTimedOutAbort(t *testing.T, adm *kadm.Client) {
	t.Helper()
	start := time.Now()
	testutil.EventuallyNoError(t, txnTimeout+15*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		described, err := adm.DescribeTransactions(ctx, txnAppID)
		if err != nil {
			return err
		}
		d, ok := described[txnAppID]
		switch {
		case !ok:
			return fmt.Errorf("%s not described", txnAppID)
		case d.Err != nil:
			return d.Err
		case d.State != "CompleteAbort":
			return fmt.Errorf("%s is %s", txnAppID, d.State)
		}
		return nil
	}, "the open transaction aborted on its timeout")
	t.Logf("%s   the coordinator aborted it %s after the kill (transaction timeout %s)", stamp(),
		time.Since(start).Round(time.Millisecond), txnTimeout)
}

// txnCoordinator is the broker the application's transactional id maps to.
func txnCoordinator(t *testing.T, adm *kadm.Client) int32 {
	var id int32
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp := adm.FindTxnCoordinators(ctx, txnAppID)
		if err := resp.Error(); err != nil {
			return err
		}
		r, ok := resp[txnAppID]
		if !ok {
			return fmt.Errorf("no answer for %s", txnAppID)
		}
		id = r.NodeID
		return nil
	}, "transaction coordinator of %s", txnAppID)
	return id
}

// outputLeaderOtherThan is a leader of output partitions other than broker
// not: the round-th of them in id order, so rounds take turns.
func outputLeaderOtherThan(t *testing.T, adm *kadm.Client, not int32, round int) int32 {
	var id int32
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		md, err := adm.Metadata(ctx, txnOutput)
		if err != nil {
			return err
		}
		var leaders []int32
		for _, pd := range md.Topics[txnOutput].Partitions {
			if pd.Leader >= 0 && pd.Leader != not && !slices.Contains(leaders, pd.Leader) {
				leaders = append(leaders, pd.Leader)
			}
		}
		if len(leaders) == 0 {
			return fmt.Errorf("every partition of %s led by %d or none", txnOutput, not)
		}
		slices.Sort(leaders)
		id = leaders[round%len(leaders)]
		return nil
	}, "a leader of %s other than %d", txnOutput, not)
	return id
}

// awaitTxnInSync waits until every partition the pipeline uses, the
// internal topics included, has a leader and all its replicas in sync.
func awaitTxnInSync(t *testing.T, adm *kadm.Client, timeout time.Duration) {
	t.Helper()
	topics := []string{txnInput, txnOutput, "__transaction_state", "__consumer_offsets"}
	testutil.EventuallyNoError(t, timeout, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		md, err := adm.Metadata(ctx, topics...)
		if err != nil {
			return err
		}
		for _, topic := range topics {
			td, ok := md.Topics[topic]
			if !ok || td.Err != nil || len(td.Partitions) == 0 {
				return fmt.Errorf("topic %s: %v", topic, td.Err)
			}
			for p, pd := range td.Partitions {
				if pd.Leader < 0 || len(pd.ISR) != len(pd.Replicas) {
					return fmt.Errorf("%s-%d: leader %d ISR %v replicas %v", topic, p, pd.Leader, pd.ISR, pd.Replicas)
				}
			}
		}
		return nil
	}, "every ISR complete")
}

// txnApp runs test/faults/txnapp, one process (instance) at a time.
type txnApp struct {
	t                  *testing.T
	bin                string
	args               []string
	slowFile, holdFile string
	procs              []*testbin.Process
}

func newTxnApp(t *testing.T, addrs []string) *txnApp {
	dir := t.TempDir()
	bin := filepath.Join(dir, "txnapp")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/sluice-io/sluice/test/faults/txnapp").CombinedOutput(); err != nil {
		t.Fatalf("build txnapp: %v\n%s", err, out)
	}
	slow := filepath.Join(dir, "slow")
	if err := os.WriteFile(slow, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hold := filepath.Join(dir, "hold")
	return &txnApp{t: t, bin: bin, slowFile: slow, holdFile: hold, args: []string{
		"-brokers", strings.Join(addrs, ","), "-group", txnAppID, "-txn-id", txnAppID,
		"-input", txnInput, "-output", txnOutput, "-slow", slow, "-hold", hold, "-txn-timeout", txnTimeout.String(),
		// SLUICE_FAULTS_TXNAPP_LOG=info or debug: franz-go's log of the
		// application, printed if the test fails.
		"-log-level", cmp.Or(os.Getenv("SLUICE_FAULTS_TXNAPP_LOG"), "warn"),
	}}
}

func (a *txnApp) start() {
	k := len(a.procs) + 1
	p := testbin.StartProcess(a.t, fmt.Sprintf("txnapp %d", k), a.bin, append(a.args, "-instance", strconv.Itoa(k))...)
	a.procs = append(a.procs, p)
	// SLUICE_FAULTS_CLIENT_LOG_DIR keeps the clients' logs, this one's too.
	if dir := os.Getenv("SLUICE_FAULTS_CLIENT_LOG_DIR"); dir != "" {
		a.t.Cleanup(func() {
			path := filepath.Join(dir, fmt.Sprintf("%s-txnapp-%d.log", a.t.Name(), k))
			if err := os.WriteFile(path, []byte(p.Logs()), 0o644); err != nil {
				a.t.Logf("keep txnapp %d's log: %v", k, err)
			}
		})
	}
}

func (a *txnApp) current() *testbin.Process { return a.procs[len(a.procs)-1] }

// kill kill -9s the application inside a transaction whose records are
// written (it holds one open for this) and returns that attempt.
func (a *txnApp) kill() string {
	if err := os.WriteFile(a.holdFile, nil, 0o644); err != nil {
		a.t.Fatal(err)
	}
	var held string
	testutil.EventuallyNoError(a.t, 60*time.Second, func() error {
		if exited, err := a.current().Exited(); exited {
			return fmt.Errorf("txnapp exited: %v", err)
		}
		held = lastHeld(a.current().Logs())
		if held == "" {
			return errors.New("no transaction held open")
		}
		return nil
	}, "txnapp holding a transaction open")
	if err := a.current().Kill(); err != nil {
		a.t.Fatalf("kill txnapp: %v", err)
	}
	if err := os.Remove(a.holdFile); err != nil {
		a.t.Fatal(err)
	}
	return held
}

// lastHeld is the attempt of a log's last "txn holding" line, or "".
func lastHeld(logs string) string {
	i := strings.LastIndex(logs, "\ntxn holding ")
	if i < 0 {
		return ""
	}
	f := strings.Fields(logs[i+1:])
	if len(f) < 3 {
		return ""
	}
	return f[2]
}

func (a *txnApp) stop() error { return a.current().Stop(30 * time.Second) }

// awaitCommits waits until the application has seen n transactions commit
// in all.
func (a *txnApp) awaitCommits(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	testutil.EventuallyNoError(t, timeout, func() error {
		if exited, err := a.current().Exited(); exited {
			return fmt.Errorf("txnapp exited: %v", err)
		}
		if got := a.outcomes().commits(); got < n {
			return fmt.Errorf("%d transactions committed", got)
		}
		return nil
	}, "%d transactions committed", n)
}

// remaining is how many input records the group has not committed.
func (a *txnApp) remaining(t *testing.T, adm *kadm.Client) int64 {
	var left int64
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ends, err := adm.ListEndOffsets(ctx, txnInput)
		if err == nil {
			err = ends.Error()
		}
		if err != nil {
			return err
		}
		committed, err := adm.FetchOffsets(ctx, txnAppID)
		if err == nil {
			err = committed.Error()
		}
		if err != nil {
			return err
		}
		left = 0
		ends.Each(func(o kadm.ListedOffset) {
			at := int64(0)
			if c, ok := committed.Lookup(txnInput, o.Partition); ok {
				at = c.At
			}
			left += o.Offset - at
		})
		return nil
	}, "the group's lag")
	return left
}

// drain lets the application run at full pace until the group has
// committed the whole input.
func (a *txnApp) drain(t *testing.T, adm *kadm.Client, timeout time.Duration) {
	t.Helper()
	if err := os.Remove(a.slowFile); err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyNoError(t, timeout, func() error {
		if exited, err := a.current().Exited(); exited {
			return fmt.Errorf("txnapp exited: %v", err)
		}
		if left := a.remaining(t, adm); left > 0 {
			return fmt.Errorf("%d input records not committed", left)
		}
		return nil
	}, "the whole input committed")
}
