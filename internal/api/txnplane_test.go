package api

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/runtime/runtimetest"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/coordinator/txncoord"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/testutil"
)

// txnFixture is a broker registry over a real transaction coordinator on
// an in-memory log, whose markers a fake writer acknowledges.
type txnFixture struct {
	f     *fakeController
	mu    sync.Mutex
	reg   *Registry
	coord *txncoord.TransactionCoordinator
}

// ackMarkers acknowledges every marker.
type ackMarkers struct{}

func (ackMarkers) WriteTxnMarkers(_ context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.SetVersion(req.Version)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

func newTxnFixture(t *testing.T) *txnFixture {
	t.Helper()
	tf := &txnFixture{f: newFakeController(t, 1)}
	tf.f.createTopic("t", 2)
	image := func() *metadata.Image {
		tf.mu.Lock()
		defer tf.mu.Unlock()
		return tf.f.image
	}
	cfg := txn.DefaultConfig()
	cfg.OffsetsPartitionFor = func(string) int32 { return 0 }
	c, err := txncoord.New(txncoord.Options{
		NodeID: 1, Txn: cfg, NumPartitions: 3, ReplicationFactor: 1, MinISR: 1,
		Writer: runtimetest.NewMemLog(), Image: image, ProducerIDs: tf.f, TickInterval: 5 * time.Millisecond,
		Markers: txncoord.MarkerOptions{Local: ackMarkers{}},
		CreateTopic: func(_ context.Context, name string, n int32, _ int16, _ map[string]string) error {
			tf.mu.Lock()
			tf.f.createTopic(name, n)
			tf.mu.Unlock()
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	t.Cleanup(c.Close)
	tf.coord = c
	// FindCoordinator comes with the group handlers; no group key is asked.
	tf.reg, err = NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(BrokerDeps{
		ProducerIDs: tf.f,
		Groups:      &GroupPlaneDeps{Coordinator: stubGroupPlane{}},
		Txns:        &TxnPlaneDeps{Coordinator: c, Image: image},
	}))
	if err != nil {
		t.Fatal(err)
	}
	return tf
}

// findCoordinator asks for the transaction coordinator until it serves, as
// clients do.
func (tf *txnFixture) findCoordinator(t *testing.T, id string) {
	t.Helper()
	testutil.Eventually(t, 5*time.Second, func() bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.SetVersion(4)
		req.CoordinatorType, req.CoordinatorKeys = 1, []string{id}
		c := reply[*kmsg.FindCoordinatorResponse](t, tf.reg, req).Coordinators[0]
		if c.ErrorCode == kerr.CoordinatorNotAvailable.Code {
			return false
		}
		if c.ErrorCode != 0 || c.NodeID != 1 || c.Host != "h" || c.Port != 9001 {
			t.Fatalf("coordinator %+v", c)
		}
		tf.coord.ApplyImage(tf.f.image)
		return tf.coord.DescribeTransaction(context.Background(), id).ErrorCode == kerr.TransactionalIDNotFound.Code
	}, "the transaction coordinator never served %q", id)
}

func (tf *txnFixture) initProducer(t *testing.T, version int16, id string, pid int64, epoch int16) *kmsg.InitProducerIDResponse {
	t.Helper()
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(version)
	req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
	req.ProducerID, req.ProducerEpoch = pid, epoch
	return reply[*kmsg.InitProducerIDResponse](t, tf.reg, req)
}

func addPartitionsV3Request(version int16, id string, pid int64, epoch int16, topic string, parts ...int32) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(version)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
	rt := kmsg.NewAddPartitionsToTxnRequestTopic()
	rt.Topic, rt.Partitions = topic, parts
	req.Topics = append(req.Topics, rt)
	return req
}

func v3Codes(resp *kmsg.AddPartitionsToTxnResponse) []int16 {
	var out []int16
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			out = append(out, p.ErrorCode)
		}
	}
	return out
}

func endTxn(t *testing.T, r *Registry, version int16, id string, pid int64, epoch int16, commit bool) *kmsg.EndTxnResponse {
	t.Helper()
	req := kmsg.NewPtrEndTxnRequest()
	req.SetVersion(version)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, commit
	return reply[*kmsg.EndTxnResponse](t, r, req)
}

// TestTransactionHandlers: a transaction through the handlers, with the
// errors Kafka answers on the way.
func TestTransactionHandlers(t *testing.T) {
	tf := newTxnFixture(t)
	tf.findCoordinator(t, "tx")
	init := tf.initProducer(t, 5, "tx", -1, -1)
	if init.ErrorCode != 0 || init.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId: %+v", init)
	}
	pid := init.ProducerID
	// A missing partition fails the request: nothing is added.
	req := addPartitionsV3Request(3, "tx", pid, 0, "t", 0, 7)
	if got := v3Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, req)); !slices.Equal(got,
		[]int16{kerr.OperationNotAttempted.Code, kerr.UnknownTopicOrPartition.Code}) {
		t.Fatalf("with an unknown partition: %v", got)
	}
	req = addPartitionsV3Request(3, "tx", pid, 0, "__consumer_offsets", 0)
	if got := v3Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, req)); !slices.Equal(got, []int16{kerr.TopicAuthorizationFailed.Code}) {
		t.Fatalf("an internal topic: %v", got)
	}
	req = addPartitionsV3Request(3, "tx", pid, 0, "t", 0, 1)
	if got := v3Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, req)); !slices.Equal(got, []int16{0, 0}) {
		t.Fatalf("add: %v", got)
	}
	ao := kmsg.NewPtrAddOffsetsToTxnRequest()
	ao.SetVersion(4)
	ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = "tx", pid, 0, "g"
	if r := reply[*kmsg.AddOffsetsToTxnResponse](t, tf.reg, ao); r.ErrorCode != 0 {
		t.Fatalf("AddOffsetsToTxn: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"tx", "nope", ""}
	states := reply[*kmsg.DescribeTransactionsResponse](t, tf.reg, dt).TransactionStates
	if s := states[0]; s.ErrorCode != 0 || s.State != "Ongoing" || s.ProducerID != pid || s.TimeoutMillis != 60000 ||
		len(s.Topics) != 2 || s.Topics[0].Topic != "__consumer_offsets" || !slices.Equal(s.Topics[1].Partitions, []int32{0, 1}) {
		t.Fatalf("describe: %+v", s)
	}
	if states[1].ErrorCode != kerr.TransactionalIDNotFound.Code || states[2].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("describe unknown and empty: %+v", states[1:])
	}
	// TV2 (v5): the epoch is bumped and returned; the old epoch is fenced.
	end := endTxn(t, tf.reg, 5, "tx", pid, 0, true)
	if end.ErrorCode != 0 || end.ProducerID != pid || end.ProducerEpoch != 1 {
		t.Fatalf("EndTxn v5: %+v", end)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		return reply[*kmsg.DescribeTransactionsResponse](t, tf.reg, dt).TransactionStates[0].State == "CompleteCommit"
	}, "the commit never completed")
	// A retry (the epoch before the bump) is answered again; the other
	// result is INVALID_TXN_STATE, as Kafka's TV2 table says.
	if r := endTxn(t, tf.reg, 5, "tx", pid, 0, true); r.ErrorCode != 0 || r.ProducerEpoch != 1 {
		t.Fatalf("retried EndTxn: %+v", r)
	}
	if r := endTxn(t, tf.reg, 5, "tx", pid, 0, false); r.ErrorCode != kerr.InvalidTxnState.Code {
		t.Fatalf("abort retrying a commit: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	req = addPartitionsV3Request(3, "tx", pid, 1, "t", 1)
	if got := v3Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, req)); !slices.Equal(got, []int16{0}) {
		t.Fatalf("add to the next transaction: %v", got)
	}
	if r := endTxn(t, tf.reg, 5, "tx", pid, 1, false); r.ErrorCode != 0 || r.ProducerEpoch != 2 {
		t.Fatalf("abort the next transaction: %+v", r)
	}
	// While the abort's markers are written any EndTxn is
	// CONCURRENT_TRANSACTIONS (KAFKA-18464), so the epochs are checked after.
	testutil.Eventually(t, 5*time.Second, func() bool {
		return reply[*kmsg.DescribeTransactionsResponse](t, tf.reg, dt).TransactionStates[0].State == "CompleteAbort"
	}, "the abort never completed")
	if r := endTxn(t, tf.reg, 5, "tx", pid, 0, false); r.ErrorCode != kerr.ProducerFenced.Code || r.ProducerID != -1 {
		t.Fatalf("stale epoch, v5: %+v", r)
	}
	if r := endTxn(t, tf.reg, 1, "tx", pid, 0, false); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("stale epoch, v1: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := endTxn(t, tf.reg, 5, "tx", pid+1, 1, false); r.ErrorCode != kerr.InvalidProducerIDMapping.Code {
		t.Fatalf("other producer: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}

// TestInitProducerIDTransactional: KIP-360 recovery with the wrong
// producer is PRODUCER_FENCED, INVALID_PRODUCER_EPOCH before v4; a
// timeout above transaction.max.timeout.ms is refused; an idempotent
// producer still gets a fresh id.
func TestInitProducerIDTransactional(t *testing.T) {
	tf := newTxnFixture(t)
	tf.findCoordinator(t, "tx")
	first := tf.initProducer(t, 4, "tx", -1, -1)
	if r := tf.initProducer(t, 4, "tx", first.ProducerID+100, 0); r.ErrorCode != kerr.ProducerFenced.Code || r.ProducerID != -1 {
		t.Fatalf("v4 wrong producer: %+v", r)
	}
	if r := tf.initProducer(t, 3, "tx", first.ProducerID+100, 0); r.ErrorCode != kerr.InvalidProducerEpoch.Code {
		t.Fatalf("v3 wrong producer: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	if r := tf.initProducer(t, 3, "tx", first.ProducerID, first.ProducerEpoch); r.ErrorCode != 0 || r.ProducerEpoch != first.ProducerEpoch+1 {
		t.Fatalf("v3 recovery: %+v", r)
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr("tx"), 15*60*1000+1
	if r := reply[*kmsg.InitProducerIDResponse](t, tf.reg, req); r.ErrorCode != kerr.InvalidTransactionTimeout.Code {
		t.Fatalf("timeout over the maximum: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	req.TransactionalID = kmsg.StringPtr("")
	if r := reply[*kmsg.InitProducerIDResponse](t, tf.reg, req); r.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("empty transactional id: %v", kerr.ErrorForCode(r.ErrorCode))
	}
	req.TransactionalID = nil
	if r := reply[*kmsg.InitProducerIDResponse](t, tf.reg, req); r.ErrorCode != 0 || r.ProducerID < 0 || r.ProducerEpoch != 0 {
		t.Fatalf("idempotent: %+v", r)
	}
}

func verifyRequest(version int16, verifyOnly bool, id string, pid int64, epoch int16, parts ...int32) *kmsg.AddPartitionsToTxnRequest {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(version)
	tr := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tr.TransactionalID, tr.ProducerID, tr.ProducerEpoch, tr.VerifyOnly = id, pid, epoch, verifyOnly
	rt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
	rt.Topic, rt.Partitions = "t", parts
	tr.Topics = append(tr.Topics, rt)
	req.Transactions = append(req.Transactions, tr)
	return req
}

func v4Codes(resp *kmsg.AddPartitionsToTxnResponse) map[string][]int16 {
	out := map[string][]int16{}
	for _, tr := range resp.Transactions {
		for _, t := range tr.Topics {
			for _, p := range t.Partitions {
				out[tr.TransactionalID] = append(out[tr.TransactionalID], p.ErrorCode)
			}
		}
	}
	return out
}

// TestAddPartitionsToTxnBrokerVersions: v4-5 from partition leaders:
// VerifyOnly answers per partition whether it is in the transaction; v5
// without it adds them (TV2's implicit add); transactions of one request
// are answered together.
func TestAddPartitionsToTxnBrokerVersions(t *testing.T) {
	tf := newTxnFixture(t)
	tf.findCoordinator(t, "tx")
	tf.findCoordinator(t, "other")
	init := tf.initProducer(t, 5, "tx", -1, -1)
	pid := init.ProducerID
	if r := reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, addPartitionsV3Request(3, "tx", pid, 0, "t", 0)); v3Codes(r)[0] != 0 {
		t.Fatalf("add: %v", v3Codes(r))
	}
	got := v4Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, verifyRequest(4, true, "tx", pid, 0, 0, 1)))
	if !slices.Equal(got["tx"], []int16{0, kerr.TransactionAbortable.Code}) {
		t.Fatalf("verify: %v", got)
	}
	got = v4Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, verifyRequest(4, true, "tx", pid, 3, 0)))
	if !slices.Equal(got["tx"], []int16{kerr.ProducerFenced.Code}) {
		t.Fatalf("verify with a stale epoch: %v", got)
	}
	req := verifyRequest(5, false, "tx", pid, 0, 1)
	other := tf.initProducer(t, 5, "other", -1, -1)
	more := verifyRequest(5, true, "other", other.ProducerID, 0, 0)
	req.Transactions = append(req.Transactions, more.Transactions...)
	got = v4Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, req))
	if !slices.Equal(got["tx"], []int16{0}) || !slices.Equal(got["other"], []int16{kerr.TransactionAbortable.Code}) {
		t.Fatalf("implicit add and a verification together: %v", got)
	}
	got = v4Codes(reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, verifyRequest(4, true, "tx", pid, 0, 0, 1, 9)))
	if !slices.Equal(got["tx"], []int16{kerr.OperationNotAttempted.Code, kerr.OperationNotAttempted.Code, kerr.UnknownTopicOrPartition.Code}) {
		t.Fatalf("verify with an unknown partition: %v", got)
	}
}

// TestListTransactionsFilters: state, producer and pattern filters, an
// unknown state name, an invalid pattern.
func TestListTransactionsFilters(t *testing.T) {
	tf := newTxnFixture(t)
	for _, id := range []string{"alpha", "beta"} {
		tf.findCoordinator(t, id)
	}
	a := tf.initProducer(t, 5, "alpha", -1, -1)
	reply[*kmsg.AddPartitionsToTxnResponse](t, tf.reg, addPartitionsV3Request(3, "alpha", a.ProducerID, 0, "t", 0))
	tf.initProducer(t, 5, "beta", -1, -1)
	list := func(version int16, states []string, pattern *string) *kmsg.ListTransactionsResponse {
		req := kmsg.NewPtrListTransactionsRequest()
		req.SetVersion(version)
		req.StateFilters, req.TransactionalIDPattern = states, pattern
		return reply[*kmsg.ListTransactionsResponse](t, tf.reg, req)
	}
	ids := func(r *kmsg.ListTransactionsResponse) (out []string) {
		for _, s := range r.TransactionStates {
			out = append(out, s.TransactionalID+":"+s.TransactionState)
		}
		slices.Sort(out)
		return out
	}
	if r := list(0, nil, nil); r.ErrorCode != 0 || !slices.Equal(ids(r), []string{"alpha:Ongoing", "beta:Empty"}) {
		t.Fatalf("all: %v %v", ids(r), r.ErrorCode)
	}
	if r := list(1, []string{"Empty", "Nope"}, nil); !slices.Equal(ids(r), []string{"beta:Empty"}) || !slices.Equal(r.UnknownStateFilters, []string{"Nope"}) {
		t.Fatalf("Empty: %v unknown %v", ids(r), r.UnknownStateFilters)
	}
	if r := list(2, nil, kmsg.StringPtr("al.*")); !slices.Equal(ids(r), []string{"alpha:Ongoing"}) {
		t.Fatalf("pattern: %v", ids(r))
	}
	if r := list(2, nil, kmsg.StringPtr("al")); len(r.TransactionStates) != 0 {
		t.Fatalf("a pattern matches whole ids: %v", ids(r))
	}
	if r := list(2, nil, kmsg.StringPtr("(")); r.ErrorCode != kerr.InvalidRegularExpression.Code {
		t.Fatalf("invalid pattern: %v", kerr.ErrorForCode(r.ErrorCode))
	}
}
