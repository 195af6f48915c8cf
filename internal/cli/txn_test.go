package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/testutil"
)

// requireTxnAPIs skips when the built sluice server does not serve the
// transaction APIs yet (issue 15); an external broker must serve them.
func requireTxnAPIs(t *testing.T, addr string) {
	t.Helper()
	_, err := runCLI(t, "", "txn", "list", "--brokers", addr)
	if err == nil {
		return
	}
	if errors.Is(err, kerr.UnsupportedVersion) && os.Getenv(testBrokersEnv) == "" {
		t.Skipf("the sluice server does not serve the transaction APIs yet (issue 15): %v", err)
	}
	t.Fatalf("txn list against %s: %v", addr, err)
}

// txnProducer is a transactional franz-go producer writing to the
// partitions its records name, once the id's coordinator answers (a new
// cluster creates __transaction_state on the first lookup).
func txnProducer(t *testing.T, addr, id string) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(id), kgo.TransactionTimeout(time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return adm.FindTxnCoordinators(ctx, id).Error()
	}, "transaction coordinator of %s", id)
	return cl
}

// produceInTxn begins a transaction and writes values to one partition.
func produceInTxn(t *testing.T, cl *kgo.Client, topic string, partition int32, values ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for _, v := range values {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: []byte(v)})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("transactional produce to %s-%d: %v", topic, partition, err)
	}
}

// describeTxn is the coordinator's view of an id, asked without the CLI.
func describeTxn(t *testing.T, addr, id string) kadm.DescribedTransaction {
	t.Helper()
	adm, err := kadm.NewOptClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	d, err := adm.DescribeTransactions(ctx, id)
	if err != nil || d[id].Err != nil {
		t.Fatalf("describe %s: %v %v", id, err, d[id].Err)
	}
	return d[id]
}

// rowWhere returns the fields of the first line whose field col is value.
func rowWhere(out string, col int, value string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > col && f[col] == value {
			return f
		}
	}
	return nil
}

func TestTxnListDescribeAndProducers(t *testing.T) {
	addr := shared.broker(t)
	requireTxnAPIs(t, addr)
	topic := uniqueTopic(t)
	b := []string{"--brokers", addr}
	mustRun(t, "", append([]string{"topic", "create", topic, "-p", "2"}, b...)...)
	t.Cleanup(func() { runCLI(t, "", "topic", "delete", topic, "--brokers", addr) })

	// One transaction left open on partition 0, one committed on 1.
	openID, doneID := topic+"-open", topic+"-done"
	open := txnProducer(t, addr, openID)
	produceInTxn(t, open, topic, 0, "o1", "o2")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		open.EndTransaction(ctx, kgo.TryAbort)
	})
	done := txnProducer(t, addr, doneID)
	produceInTxn(t, done, topic, 1, "d1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := done.EndTransaction(ctx, kgo.TryCommit); err != nil {
		t.Fatal(err)
	}
	// The commit completes once its markers are written.
	testutil.Eventually(t, 15*time.Second, func() bool {
		return describeTxn(t, addr, doneID).State == "CompleteCommit"
	}, "%s completes its commit", doneID)
	o, d := describeTxn(t, addr, openID), describeTxn(t, addr, doneID)
	openPID, donePID := fmt.Sprint(o.ProducerID), fmt.Sprint(d.ProducerID)

	t.Run("list", func(t *testing.T) {
		out := mustRun(t, "", append([]string{"txn", "list"}, b...)...)
		if !hasRow(out, "TransactionalId", "Coordinator", "ProducerId", "TransactionState") ||
			!hasRow(out, openID, fmt.Sprint(o.Coordinator), openPID, "Ongoing") ||
			!hasRow(out, doneID, fmt.Sprint(d.Coordinator), donePID, "CompleteCommit") {
			t.Fatalf("list does not show both transactions:\n%s", out)
		}
		out = mustRun(t, "", append([]string{"txn", "list", "--state", "Ongoing"}, b...)...)
		if rowWhere(out, 0, openID) == nil || rowWhere(out, 0, doneID) != nil {
			t.Fatalf("list --state Ongoing:\n%s", out)
		}
		out = mustRun(t, "", append([]string{"txn", "list", "--producer-id", donePID}, b...)...)
		if rowWhere(out, 0, openID) != nil || rowWhere(out, 0, doneID) == nil {
			t.Fatalf("list --producer-id %s:\n%s", donePID, out)
		}
		out = mustRun(t, "", append([]string{"txn", "list", "--duration-ms", "3600000"}, b...)...)
		if rowWhere(out, 0, openID) != nil {
			t.Fatalf("list --duration-ms 3600000 shows a transaction open for less than an hour:\n%s", out)
		}
		out = mustRun(t, "", append([]string{"txn", "list", "--duration-ms", "0", "--state", "Ongoing"}, b...)...)
		if rowWhere(out, 0, openID) == nil {
			t.Fatalf("list --duration-ms 0 --state Ongoing:\n%s", out)
		}
		out = mustRun(t, "", append([]string{"txn", "list", "--json", "--producer-id", openPID}, b...)...)
		var listed []txnListing
		if err := json.Unmarshal([]byte(out), &listed); err != nil {
			t.Fatalf("list --json printed %q: %v", out, err)
		}
		if len(listed) != 1 || listed[0] != (txnListing{openID, o.Coordinator, o.ProducerID, "Ongoing"}) {
			t.Fatalf("list --json: %+v", listed)
		}
	})

	t.Run("describe", func(t *testing.T) {
		out := mustRun(t, "", append([]string{"txn", "describe", openID, doneID}, b...)...)
		if !hasRow(out, describeTxnHeaders...) {
			t.Fatalf("describe has not Kafka's headings:\n%s", out)
		}
		row := rowWhere(out, 1, openID)
		if len(row) != 9 || row[0] != fmt.Sprint(o.Coordinator) || row[2] != openPID || row[3] != fmt.Sprint(o.ProducerEpoch) ||
			row[4] != "Ongoing" || row[5] != "60000" || row[6] == "None" || row[8] != topic+"-0" {
			t.Fatalf("describe row of the open transaction %q:\n%s", row, out)
		}
		row = rowWhere(out, 1, doneID)
		if len(row) != 8 || row[2] != donePID || row[4] != "CompleteCommit" {
			t.Fatalf("describe row of the committed transaction %q:\n%s", row, out)
		}
		out = mustRun(t, "", append([]string{"txn", "describe", openID, "--json"}, b...)...)
		var ds []txnDescription
		if err := json.Unmarshal([]byte(out), &ds); err != nil {
			t.Fatalf("describe --json printed %q: %v", out, err)
		}
		if len(ds) != 1 || ds[0].State != "Ongoing" || ds[0].StartTimeMs == nil ||
			len(ds[0].Partitions) != 1 || ds[0].Partitions[0] != (topicIndex{topic, 0}) {
			t.Fatalf("describe --json: %s", out)
		}
		_, err := runCLI(t, "", append([]string{"txn", "describe", topic + "-never"}, b...)...)
		if !errors.Is(err, kerr.TransactionalIDNotFound) || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), "TRANSACTIONAL_ID_NOT_FOUND: ") {
			t.Fatalf("describe of an unknown id: %v, want one line with TRANSACTIONAL_ID_NOT_FOUND", err)
		}
	})

	t.Run("describe-producers", func(t *testing.T) {
		out := mustRun(t, "", append([]string{"txn", "describe-producers", topic}, b...)...)
		if !hasRow(out, describeProducersHeaders...) {
			t.Fatalf("describe-producers has not Kafka's headings:\n%s", out)
		}
		// Partition, ProducerId, ProducerEpoch, LatestCoordinatorEpoch,
		// LastSequence, LastTimestamp, CurrentTransactionStartOffset.
		row := rowWhere(out, 1, openPID)
		if len(row) != 7 || row[0] != "0" || row[2] != fmt.Sprint(o.ProducerEpoch) || row[4] != "1" || row[6] != "0" {
			t.Fatalf("the open producer's row %q:\n%s", row, out)
		}
		row = rowWhere(out, 1, donePID)
		// (Its sequence is not checked: a TV2 commit bumps the epoch, and
		// Kafka then shows -1.)
		if len(row) != 7 || row[0] != "1" || row[6] != "None" {
			t.Fatalf("the committed producer's row %q:\n%s", row, out)
		}
		out = mustRun(t, "", append([]string{"txn", "describe-producers", topic, "-p", "0", "--json"}, b...)...)
		var ps []producerRow
		if err := json.Unmarshal([]byte(out), &ps); err != nil {
			t.Fatalf("describe-producers --json printed %q: %v", out, err)
		}
		if len(ps) != 1 || ps[0].ProducerID != o.ProducerID || ps[0].CurrentTxnStartOffset == nil || *ps[0].CurrentTxnStartOffset != 0 {
			t.Fatalf("describe-producers -p 0 --json: %s", out)
		}
		for _, args := range [][]string{{topic, "-p", "7"}, {topic + "-missing"}} {
			_, err := runCLI(t, "", append(append([]string{"txn", "describe-producers"}, args...), b...)...)
			if !errors.Is(err, kerr.UnknownTopicOrPartition) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("describe-producers %v: %v, want one line with UNKNOWN_TOPIC_OR_PARTITION", args, err)
			}
		}
	})

	t.Run("find-hanging", func(t *testing.T) {
		// Open for longer than a zero timeout, but its coordinator lists
		// the partition in its ongoing transaction: not hanging.
		out := mustRun(t, "", append([]string{"txn", "find-hanging", "--topic", topic, "--max-transaction-timeout-minutes", "0"}, b...)...)
		if !hasRow(out, findHangingHeaders...) || rowWhere(out, 0, topic) != nil {
			t.Fatalf("find-hanging reports a transaction its coordinator runs:\n%s", out)
		}
	})

	t.Run("abort flags", func(t *testing.T) {
		for _, args := range [][]string{
			{"--topic", topic, "--partition", "0"},
			{"--topic", topic, "--partition", "0", "--start-offset", "0", "--producer-id", openPID},
			{"--topic", topic, "--partition", "0", "--producer-id", openPID},
		} {
			if _, err := runCLI(t, "", append(append([]string{"txn", "abort"}, args...), b...)...); err == nil {
				t.Fatalf("txn abort %v accepted", args)
			}
		}
	})
}

// unverifiedBroker is a broker that appends transactional batches without
// asking the coordinator (transaction.partition.verification.enable=false),
// the one way a client can leave a transaction hanging on a partition: its
// own server, or the external one with the dynamic config set until the
// test ends.
func unverifiedBroker(t *testing.T) string {
	t.Helper()
	if os.Getenv(testBrokersEnv) == "" {
		s := &testServer{overrides: []string{"transaction.partition.verification.enable=false"}}
		t.Cleanup(s.stop)
		return s.broker(t)
	}
	addr := shared.broker(t)
	mustRun(t, "", "cluster", "config", "set", "transaction.partition.verification.enable=false", "--brokers", addr)
	t.Cleanup(func() {
		runCLI(t, "", "cluster", "config", "set", "--delete", "transaction.partition.verification.enable", "--brokers", addr)
	})
	return addr
}

// initProducerID gets the transactional id's producer id and epoch; the id
// stays Empty at its coordinator, which never hears of a partition.
func initProducerID(t *testing.T, cl *kgo.Client, id string) (int64, int16) {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = 60000
	var resp *kmsg.InitProducerIDResponse
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		if resp, err = req.RequestWith(ctx, cl); err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.ErrorCode)
	}, "InitProducerId for %s", id)
	return resp.ProducerID, resp.ProducerEpoch
}

// produceHanging writes a transactional batch of two records stamped ts to
// the partition with Produce v11 (v12 would add the partition to the
// transaction), for as long as the broker still verifies it (a dynamic
// config takes a moment to apply).
func produceHanging(t *testing.T, cl *kgo.Client, id, topic string, partition int32, pid int64, epoch int16, ts int64) {
	t.Helper()
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID, req.Acks, req.TimeoutMillis = &id, -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = recordstest.Batch(t, recordstest.Values(ts, "h1", "h2"), recordstest.Producer(pid, epoch, 0), recordstest.Transactional())
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	testutil.EventuallyNoError(t, 30*time.Second, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := req.RequestWith(ctx, cl.Broker(leaderOf(t, cl, topic, partition)))
		if err != nil {
			return err
		}
		return kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode)
	}, "unverified transactional produce to %s-%d", topic, partition)
}

func leaderOf(t *testing.T, cl *kgo.Client, topic string, partition int32) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return int(md.Topics[topic].Partitions[partition].Leader)
}

// committedEnd is the partition's last stable offset.
func committedEnd(t *testing.T, cl *kgo.Client, topic string, partition int32) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := ends.Lookup(topic, partition)
	return o.Offset
}

func TestTxnFindHangingAndAbort(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server of its own")
	}
	addr := unverifiedBroker(t)
	requireTxnAPIs(t, addr)
	topic := uniqueTopic(t)
	b := []string{"--brokers", addr}
	mustRun(t, "", append([]string{"topic", "create", topic, "-p", "2"}, b...)...)
	t.Cleanup(func() { runCLI(t, "", "topic", "delete", topic, "--brokers", addr) })

	versions := kversion.Stable()
	versions.SetMaxKeyVersion(0, 11)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(versions))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	id := topic + "-hang"
	pid, epoch := initProducerID(t, cl, id)
	ts := time.Now().Add(-2 * time.Minute).UnixMilli()
	produceHanging(t, cl, id, topic, 0, pid, epoch, ts)
	produceHanging(t, cl, id, topic, 1, pid, epoch, ts)
	if end := committedEnd(t, cl, topic, 0); end != 0 {
		t.Fatalf("last stable offset %d under an open transaction, want 0", end)
	}
	P, E, TS := fmt.Sprint(pid), fmt.Sprint(epoch), fmt.Sprint(ts)

	out := mustRun(t, "", append([]string{"txn", "find-hanging", "--topic", topic}, b...)...)
	if rowWhere(out, 0, topic) != nil {
		t.Fatalf("find-hanging with the default 15 minutes reports a producer idle for 2:\n%s", out)
	}
	out = mustRun(t, "", append([]string{"txn", "find-hanging", "--topic", topic, "--max-transaction-timeout-minutes", "1"}, b...)...)
	// Topic, Partition, ProducerId, ProducerEpoch, CoordinatorEpoch,
	// StartOffset, LastTimestamp, Duration(min).
	for _, p := range []string{"0", "1"} {
		if !hasRow(out, topic, p, P, E, "-1", "0", TS, "2") {
			t.Fatalf("find-hanging does not report the transaction on partition %s:\n%s", p, out)
		}
	}
	out = mustRun(t, "", append([]string{"txn", "find-hanging", "--json", "--max-transaction-timeout-minutes", "1"}, b...)...)
	var hanging []hangingRow
	if err := json.Unmarshal([]byte(out), &hanging); err != nil {
		t.Fatalf("find-hanging --json printed %q: %v", out, err)
	}
	found := 0
	for _, h := range hanging {
		if h.Topic == topic && h.ProducerID == pid && h.StartOffset == 0 {
			found++
		}
	}
	if found != 2 {
		t.Fatalf("find-hanging over every topic --json: %s", out)
	}

	out = mustRun(t, "", append([]string{"txn", "abort", "--topic", topic, "--partition", "0", "--start-offset", "0"}, b...)...)
	if want := fmt.Sprintf("aborted the transaction of producer %d (epoch %d, coordinator epoch 0) on %s-0\n", pid, epoch, topic); out != want {
		t.Fatalf("abort --start-offset printed %q, want %q", out, want)
	}
	out = mustRun(t, "", append([]string{"txn", "abort", "--topic", topic, "--partition", "1",
		"--producer-id", P, "--producer-epoch", E, "--coordinator-epoch", "-1", "--json"}, b...)...)
	var aborted abortSpec
	if err := json.Unmarshal([]byte(out), &aborted); err != nil {
		t.Fatalf("abort --json printed %q: %v", out, err)
	}
	if aborted != (abortSpec{topic, 1, pid, epoch, 0}) {
		t.Fatalf("abort --json: %+v", aborted)
	}

	// Two records and the marker: the partition is stable to its end.
	for _, p := range []int32{0, 1} {
		if end := committedEnd(t, cl, topic, p); end != 3 {
			t.Fatalf("last stable offset of partition %d after the abort: %d, want 3", p, end)
		}
	}
	out = mustRun(t, "", append([]string{"txn", "describe-producers", topic}, b...)...)
	for _, p := range []string{"0", "1"} {
		// The marker's timestamp is the producer's last now.
		row := rowWhere(out, 0, p)
		if len(row) != 7 || row[1] != P || row[2] != E || row[3] != "0" || row[4] != "1" || row[6] != "None" {
			t.Fatalf("describe-producers after the aborts, partition %s:\n%s", p, out)
		}
	}
	out = mustRun(t, "", append([]string{"txn", "find-hanging", "--topic", topic, "--max-transaction-timeout-minutes", "0"}, b...)...)
	if rowWhere(out, 0, topic) != nil {
		t.Fatalf("find-hanging after the aborts:\n%s", out)
	}
	_, err = runCLI(t, "", append([]string{"txn", "abort", "--topic", topic, "--partition", "0", "--start-offset", "0"}, b...)...)
	if err == nil || !strings.Contains(err.Error(), "no open transaction starts at offset 0 on "+topic+"-0") {
		t.Fatalf("a second abort at offset 0: %v", err)
	}
}
