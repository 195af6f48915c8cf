package txncoord

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
)

// begin runs InitProducerId and adds parts, returning the producer.
func begin(t *testing.T, c *TransactionCoordinator, id string, timeoutMs int32, parts ...kafka.TopicPartition) txn.InitResult {
	t.Helper()
	ctx := context.Background()
	init := c.InitProducerID(ctx, txn.InitRequest{TransactionalID: id, TimeoutMs: timeoutMs, ProducerID: -1, ProducerEpoch: -1})
	if init.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %v", kerr.ErrorForCode(init.ErrorCode))
	}
	code := c.AddPartitions(ctx, txn.AddPartitionsRequest{TransactionalID: id, ProducerID: init.ProducerID,
		ProducerEpoch: init.ProducerEpoch, Partitions: parts})
	if code != 0 {
		t.Fatalf("AddPartitionsToTxn: %v", kerr.ErrorForCode(code))
	}
	return init
}

func end(t *testing.T, c *TransactionCoordinator, id string, p txn.InitResult, commit bool) txn.EndTxnResult {
	t.Helper()
	res := c.EndTxn(context.Background(), txn.EndTxnRequest{TransactionalID: id, ProducerID: p.ProducerID,
		ProducerEpoch: p.ProducerEpoch, Commit: commit, ClientTransactionVersion: txn.TV2})
	if res.ErrorCode != 0 {
		t.Fatalf("EndTxn: %v", kerr.ErrorForCode(res.ErrorCode))
	}
	return res
}

// TestCommitWritesMarkersToEachLeader: a commit's markers go to the local
// writer for the partition this broker leads and to the other broker's
// listener for the other, in one request each, and the transaction
// completes once both acknowledged.
func TestCommitWritesMarkersToEachLeader(t *testing.T) {
	e := newEnv(t, nil, cluster{txnLeader: self, txnEpoch: 3, leaders: []int32{self, other}})
	e.c.ApplyImage(e.image.Load())
	waitLoaded(t, e.c)
	p := begin(t, e.c, "tx", 60000, tp(0), tp(1))
	if p.ProducerID != 1000 || p.ProducerEpoch != 0 || e.ids.calls.Load() != 1 {
		t.Fatalf("producer %+v after %d allocations, want id 1000 epoch 0 from one", p, e.ids.calls.Load())
	}
	res := end(t, e.c, "tx", p, true)
	if res.ProducerID != p.ProducerID || res.ProducerEpoch != 1 {
		t.Fatalf("TV2 EndTxn answered %+v, want the bumped epoch 1", res)
	}
	waitState(t, e.c, "tx", txn.CompleteCommit)
	got := e.brokers.received()
	slices.Sort(got)
	want := []string{
		"broker 1: orders-0 pid 1000 epoch 1 commit true coordinator epoch 3",
		"broker 2: orders-1 pid 1000 epoch 1 commit true coordinator epoch 3",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("markers\n%q\nwant\n%q", got, want)
	}
	if n := e.c.markers.Pending(); n != 0 {
		t.Fatalf("%d jobs pending after the completion", n)
	}
}

// TestMarkersRetryFailuresAndLeaderChanges: a retriable error, a failed
// request and NOT_LEADER_OR_FOLLOWER followed by a leader change are all
// retried until every partition has its marker, at its current leader.
func TestMarkersRetryFailuresAndLeaderChanges(t *testing.T) {
	cl := cluster{txnLeader: self, leaders: []int32{self, other}}
	e := newEnv(t, nil, cl)
	e.c.ApplyImage(e.image.Load())
	waitLoaded(t, e.c)
	p := begin(t, e.c, "tx", 60000, tp(0), tp(1))
	e.brokers.failNext(tp(1), kerr.NotEnoughReplicas.Code)
	e.brokers.mu.Lock()
	e.brokers.peerFail = 1
	e.brokers.mu.Unlock()
	// Partition 0 keeps answering NOT_LEADER until its leader moves.
	e.brokers.failNext(tp(0), slices.Repeat([]int16{kerr.NotLeaderForPartition.Code}, 1000)...)
	end(t, e.c, "tx", p, false)
	testutil.Eventually(t, 5*time.Second, func() bool {
		return slices.Contains(e.brokers.received(), "broker 1: orders-0 pid 1000 epoch 1 commit false coordinator epoch 0")
	}, "no marker reached the first leader of orders-0")
	if d := e.c.DescribeTransaction(context.Background(), "tx"); d.State != txn.PrepareAbort {
		t.Fatalf("state %v while a partition refuses its marker, want PrepareAbort", d.State)
	}
	e.brokers.mu.Lock()
	e.brokers.codes[tp(0)] = nil
	e.brokers.mu.Unlock()
	cl.leaders = []int32{other, other}
	e.setCluster(cl, e.c)
	waitState(t, e.c, "tx", txn.CompleteAbort)
	got := e.brokers.received()
	for _, want := range []string{
		"broker 2: orders-0 pid 1000 epoch 1 commit false coordinator epoch 0",
		"broker 2: orders-1 pid 1000 epoch 1 commit false coordinator epoch 0",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no %q among %q", want, got)
		}
	}
}

// TestMarkersOfDeletedTopicsAndFencing: a partition of a deleted topic
// counts as acknowledged; a fenced answer drops the job (the transaction
// stays decided for the next coordinator).
func TestMarkersOfDeletedTopicsAndFencing(t *testing.T) {
	cl := cluster{txnLeader: self, leaders: []int32{self, self}}
	e := newEnv(t, nil, cl)
	e.c.ApplyImage(e.image.Load())
	waitLoaded(t, e.c)
	p := begin(t, e.c, "deleted", 60000, tp(0))
	q := begin(t, e.c, "fenced", 60000, tp(1))
	e.setCluster(cluster{txnLeader: self, leaders: nil}, e.c)
	end(t, e.c, "deleted", p, true)
	waitState(t, e.c, "deleted", txn.CompleteCommit)
	if got := e.brokers.received(); len(got) != 0 {
		t.Fatalf("markers sent for a deleted topic: %q", got)
	}
	e.setCluster(cl, e.c)
	e.brokers.failNext(tp(1), kerr.TransactionCoordinatorFenced.Code)
	end(t, e.c, "fenced", q, true)
	testutil.Eventually(t, 5*time.Second, func() bool { return len(e.brokers.received()) == 1 && e.c.markers.Pending() == 0 },
		"the fenced job was not dropped (markers %q)", e.brokers.received())
	if d := e.c.DescribeTransaction(context.Background(), "fenced"); d.State != txn.PrepareCommit {
		t.Fatalf("fenced transaction in %v, want PrepareCommit", d.State)
	}
}

// TestTimedOutTransactionIsAborted: on the manual clock, a transaction
// past its timeout is aborted at the next check, with the epoch raised once
// (the abort's TV2 bump, as the pinned Kafka): the producer's late TV1
// commit is fenced, and its TV2 commit, whose epoch is the one before the
// bump, is INVALID_TXN_STATE (the pinned Kafka's answer; KAFKA-20785 later
// makes it PRODUCER_FENCED).
func TestTimedOutTransactionIsAborted(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	e := newEnv(t, clk, cluster{txnLeader: self, leaders: []int32{self, other}})
	e.c.ApplyImage(e.image.Load())
	waitLoaded(t, e.c)
	p := begin(t, e.c, "slow", 1000, tp(0), tp(1))
	clk.Advance(2 * time.Second)
	if d := e.c.DescribeTransaction(context.Background(), "slow"); d.State != txn.Ongoing {
		t.Fatalf("aborted before the check interval: %v", d.State)
	}
	clk.Advance(txn.DefaultConfig().AbortTimedOutInterval)
	d := waitState(t, e.c, "slow", txn.CompleteAbort)
	if d.ProducerEpoch != p.ProducerEpoch+1 {
		t.Fatalf("epoch %d after the timeout, want %d", d.ProducerEpoch, p.ProducerEpoch+1)
	}
	for _, c := range []struct {
		v    txn.TransactionVersion
		want int16
	}{{txn.TV0, kerr.ProducerFenced.Code}, {txn.TV2, kerr.InvalidTxnState.Code}} {
		res := e.c.EndTxn(context.Background(), txn.EndTxnRequest{TransactionalID: "slow", ProducerID: p.ProducerID,
			ProducerEpoch: p.ProducerEpoch, Commit: true, ClientTransactionVersion: c.v})
		if res.ErrorCode != c.want {
			t.Fatalf("the timed-out producer's %v commit: %v, want %v", c.v, kerr.ErrorForCode(res.ErrorCode), kerr.ErrorForCode(c.want))
		}
	}
	got := e.brokers.received()
	slices.Sort(got)
	want := []string{
		fmt.Sprintf("broker 1: orders-0 pid 1000 epoch %d commit false coordinator epoch 0", d.ProducerEpoch),
		fmt.Sprintf("broker 2: orders-1 pid 1000 epoch %d commit false coordinator epoch 0", d.ProducerEpoch),
	}
	if !slices.Equal(got, want) {
		t.Fatalf("abort markers\n%q\nwant\n%q", got, want)
	}
}

// TestFailoverResumesPrepareCommit: a coordinator that wrote PrepareCommit
// and could not write the markers stops; the next one (a new leader epoch)
// loads the transaction, writes its markers with its own epoch and
// completes it.
func TestFailoverResumesPrepareCommit(t *testing.T) {
	e := newEnv(t, nil, cluster{txnLeader: self, txnEpoch: 4, leaders: []int32{self, other}})
	e.c.ApplyImage(e.image.Load())
	waitLoaded(t, e.c)
	p := begin(t, e.c, "tx", 60000, tp(0), tp(1))
	e.brokers.failNext(tp(1), slices.Repeat([]int16{kerr.NotEnoughReplicas.Code}, 1000)...)
	end(t, e.c, "tx", p, true)
	testutil.Eventually(t, 5*time.Second, func() bool { return len(e.brokers.received()) >= 2 }, "no markers sent")
	e.c.Close()

	e.brokers.mu.Lock()
	e.brokers.codes, e.brokers.calls = nil, nil
	e.brokers.mu.Unlock()
	next := e.newCoordinator(e.log)
	e.setCluster(cluster{txnLeader: self, txnEpoch: 5, leaders: []int32{self, other}}, next)
	d := waitState(t, next, "tx", txn.CompleteCommit)
	if d.ProducerID != p.ProducerID || d.ProducerEpoch != 1 {
		t.Fatalf("after the failover %+v", d)
	}
	got := e.brokers.received()
	slices.Sort(got)
	want := []string{
		"broker 1: orders-0 pid 1000 epoch 1 commit true coordinator epoch 5",
		"broker 2: orders-1 pid 1000 epoch 1 commit true coordinator epoch 5",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("resumed markers\n%q\nwant\n%q", got, want)
	}
}
