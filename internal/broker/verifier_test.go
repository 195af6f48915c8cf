package broker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/coordinator/txncoord"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/testutil"
)

const (
	thisBroker  int32 = 1
	otherBroker int32 = 2
)

// coordinatorImage is an image where txnLeader leads __transaction_state's
// one partition (-1: no leader).
func coordinatorImage(t *testing.T, txnLeader int32) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	recs := []metadata.Record{
		&metadata.TopicRecord{Name: txncoord.TransactionStateTopic, TopicID: kafka.UUID{1}},
		&metadata.PartitionRecord{TopicID: kafka.UUID{1}, Partition: 0, Replicas: []int32{thisBroker, otherBroker},
			ISR: []int32{thisBroker, otherBroker}, Leader: txnLeader},
	}
	for _, id := range []int32{thisBroker, otherBroker} {
		recs = append(recs, &metadata.RegisterBrokerRecord{BrokerID: id, BrokerEpoch: 1,
			Endpoints: []metadata.Endpoint{{Name: "INTERNAL", Host: "localhost", Port: 9000 + id}}})
	}
	for i, r := range recs {
		if err := d.Replay(int64(i), 1, r); err != nil {
			t.Fatal(err)
		}
	}
	return d.Apply()
}

// fakeLocal is a local coordinator: Verify answers codes, AddPartitions
// records its request.
type fakeLocal struct {
	mu    sync.Mutex
	codes []int16
	added []txn.AddPartitionsRequest
}

func (f *fakeLocal) PartitionFor(string) int32 { return 0 }

func (f *fakeLocal) Verify(_ context.Context, req txn.VerifyRequest) []int16 {
	return f.codes[:len(req.Partitions)]
}

func (f *fakeLocal) AddPartitions(_ context.Context, req txn.AddPartitionsRequest) int16 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.added = append(f.added, req)
	return 0
}

// fakeCoordinator answers AddPartitionsToTxn for the other broker: each
// partition TRANSACTION_ABORTABLE when its transactional id is "abortable",
// else 0; hold, when set, blocks requests until closed.
type fakeCoordinator struct {
	mu       sync.Mutex
	requests []*kmsg.AddPartitionsToTxnRequest
	hold     chan struct{}
	fail     error
	topCode  int16
}

func (f *fakeCoordinator) Request(ctx context.Context, addr string, req kmsg.Request) (kmsg.Response, error) {
	if addr != fmt.Sprintf("localhost:%d", 9000+otherBroker) {
		return nil, fmt.Errorf("unexpected address %s", addr)
	}
	r := req.(*kmsg.AddPartitionsToTxnRequest)
	f.mu.Lock()
	f.requests = append(f.requests, r)
	hold, fail, top := f.hold, f.fail, f.topCode
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.SetVersion(r.Version)
	resp.ErrorCode = top
	for _, tr := range r.Transactions {
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = tr.TransactionalID
		for _, topic := range tr.Topics {
			rtt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
			rtt.Topic = topic.Topic
			for _, p := range topic.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
				rp.Partition = p
				if tr.TransactionalID == "abortable" {
					rp.ErrorCode = kerr.TransactionAbortable.Code
				}
				rtt.Partitions = append(rtt.Partitions, rp)
			}
			rt.Topics = append(rt.Topics, rtt)
		}
		resp.Transactions = append(resp.Transactions, rt)
	}
	return resp, nil
}

func (f *fakeCoordinator) sent() []*kmsg.AddPartitionsToTxnRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*kmsg.AddPartitionsToTxnRequest(nil), f.requests...)
}

func newVerifier(t *testing.T, txnLeader int32, local LocalTxnCoordinator, peers PeerRequester) *TxnVerifier {
	t.Helper()
	im := coordinatorImage(t, txnLeader)
	v := NewTxnVerifier(TxnVerifierOptions{NodeID: thisBroker, Image: func() *metadata.Image { return im },
		Listener: "INTERNAL", Local: local, Peers: peers})
	t.Cleanup(v.Close)
	return v
}

var (
	p0 = kafka.TopicPartition{Topic: "orders", Partition: 0}
	p1 = kafka.TopicPartition{Topic: "orders", Partition: 1}
)

func verifyReq(id string, epoch int16, add bool, parts ...kafka.TopicPartition) replication.VerifyRequest {
	return replication.VerifyRequest{TransactionalID: id, ProducerID: 7, ProducerEpoch: epoch, Partitions: parts, AddPartitions: add}
}

// TestVerifierLocalCoordinator: when this broker coordinates, its
// coordinator is asked directly: Verify's codes per partition, or the TV2
// implicit add.
func TestVerifierLocalCoordinator(t *testing.T) {
	local := &fakeLocal{codes: []int16{0, kerr.TransactionAbortable.Code}}
	v := newVerifier(t, thisBroker, local, nil)
	got := v.VerifyTransaction(context.Background(), verifyReq("tx", 0, false, p0, p1))
	if want := map[kafka.TopicPartition]int16{p0: 0, p1: kerr.TransactionAbortable.Code}; !maps.Equal(got, want) {
		t.Fatalf("verify: %v, want %v", got, want)
	}
	got = v.VerifyTransaction(context.Background(), verifyReq("tx", 0, true, p1))
	if !maps.Equal(got, map[kafka.TopicPartition]int16{p1: 0}) || len(local.added) != 1 || local.added[0].ClientTransactionVersion != txn.TV2 {
		t.Fatalf("implicit add: %v, requests %+v", got, local.added)
	}
}

// TestVerifierWithoutCoordinator: no leader of the id's partition, or a
// single node whose coordinator is elsewhere, is COORDINATOR_NOT_AVAILABLE.
func TestVerifierWithoutCoordinator(t *testing.T) {
	for name, v := range map[string]*TxnVerifier{
		"no leader": newVerifier(t, -1, &fakeLocal{}, &fakeCoordinator{}),
		"no peers":  newVerifier(t, otherBroker, &fakeLocal{}, nil),
	} {
		got := v.VerifyTransaction(context.Background(), verifyReq("tx", 0, false, p0))
		if !maps.Equal(got, map[kafka.TopicPartition]int16{p0: kerr.CoordinatorNotAvailable.Code}) {
			t.Errorf("%s: %v", name, got)
		}
	}
}

// TestVerifierBatchesPerCoordinator: while a request is in flight, the
// transactions that arrive wait and go together in the next one; a second
// verification of a waiting id with a higher epoch fences the first
// (INVALID_PRODUCER_EPOCH), one with a lower epoch is refused at once.
func TestVerifierBatchesPerCoordinator(t *testing.T) {
	peer := &fakeCoordinator{hold: make(chan struct{})}
	v := newVerifier(t, otherBroker, &fakeLocal{}, peer)
	ctx := context.Background()
	results := make(map[string]map[kafka.TopicPartition]int16)
	var mu sync.Mutex
	var wg sync.WaitGroup
	verify := func(key string, req replication.VerifyRequest) {
		wg.Go(func() {
			got := v.VerifyTransaction(ctx, req)
			mu.Lock()
			results[key] = got
			mu.Unlock()
		})
	}
	verify("first", verifyReq("first", 0, false, p0))
	testutil.Eventually(t, 5*time.Second, func() bool { return len(peer.sent()) == 1 }, "the first request was not sent")
	verify("abortable", verifyReq("abortable", 0, false, p0, p1))
	verify("fenced", verifyReq("tx", 1, false, p0))
	testutil.Eventually(t, 5*time.Second, func() bool {
		v.mu.Lock()
		defer v.mu.Unlock()
		return len(v.mu.nodes[otherBroker].waiting) == 2
	}, "the verifications did not queue")
	verify("current", verifyReq("tx", 2, true, p1))
	testutil.Eventually(t, 5*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return results["fenced"] != nil
	}, "the fenced verification was not answered")
	if got := v.VerifyTransaction(ctx, verifyReq("tx", 1, false, p0)); !maps.Equal(got, map[kafka.TopicPartition]int16{p0: kerr.InvalidProducerEpoch.Code}) {
		t.Fatalf("a lower epoch than the one waiting: %v", got)
	}
	close(peer.hold)
	wg.Wait()
	want := map[string]map[kafka.TopicPartition]int16{
		"first":     {p0: 0},
		"abortable": {p0: kerr.TransactionAbortable.Code, p1: kerr.TransactionAbortable.Code},
		"fenced":    {p0: kerr.InvalidProducerEpoch.Code},
		"current":   {p1: 0},
	}
	for k, w := range want {
		if !maps.Equal(results[k], w) {
			t.Errorf("%s: %v, want %v", k, results[k], w)
		}
	}
	sent := peer.sent()
	if len(sent) != 2 || sent[1].Version != 5 || len(sent[1].Transactions) != 2 {
		t.Fatalf("requests %d, second %+v", len(sent), sent[len(sent)-1])
	}
	second := sent[1].Transactions
	if second[0].TransactionalID != "abortable" || !second[0].VerifyOnly || second[1].TransactionalID != "tx" ||
		second[1].VerifyOnly || second[1].ProducerEpoch != 2 {
		t.Fatalf("second request's transactions %+v", second)
	}
}

// TestVerifierErrors: a failed request is NETWORK_EXCEPTION, a
// request-level CLUSTER_AUTHORIZATION_FAILED is INVALID_TXN_STATE, a caller
// whose context ends gets NETWORK_EXCEPTION.
func TestVerifierErrors(t *testing.T) {
	peer := &fakeCoordinator{fail: errors.New("connection refused")}
	v := newVerifier(t, otherBroker, &fakeLocal{}, peer)
	if got := v.VerifyTransaction(context.Background(), verifyReq("tx", 0, false, p0)); got[p0] != kerr.NetworkException.Code {
		t.Fatalf("failed request: %v", got)
	}
	peer.mu.Lock()
	peer.fail, peer.topCode = nil, kerr.ClusterAuthorizationFailed.Code
	peer.mu.Unlock()
	if got := v.VerifyTransaction(context.Background(), verifyReq("tx", 0, false, p0)); got[p0] != kerr.InvalidTxnState.Code {
		t.Fatalf("cluster authorization: %v", got)
	}
	peer.mu.Lock()
	peer.topCode, peer.hold = 0, make(chan struct{})
	peer.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := v.VerifyTransaction(ctx, verifyReq("tx", 0, false, p0)); got[p0] != kerr.NetworkException.Code {
		t.Fatalf("cancelled: %v", got)
	}
}
