package api

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/replication"
)

func txnTestBatch(t testing.TB, pid int64, seq int32, n int) []byte {
	t.Helper()
	return recordstest.Batch(t, recordstest.N(n, func(i int) recordstest.Record {
		return recordstest.Record{Timestamp: dataTestStart.UnixMilli(), Value: []byte{byte(i)}}
	}), recordstest.Producer(pid, 0, seq), recordstest.Transactional())
}

// markersVia writes markers through the replica manager, as the broker's
// MarkerWriter does, recording the requests it was given.
type markersVia struct {
	rm   *replication.ReplicaManager
	reqs []*kmsg.WriteTxnMarkersRequest
}

func (m *markersVia) WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	m.reqs = append(m.reqs, req)
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	for _, km := range req.Markers {
		var tps []kafka.TopicPartition
		for _, t := range km.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		out := m.rm.AppendTxnMarkers(ctx, time.Second, []replication.TxnMarker{{ProducerID: km.ProducerID, ProducerEpoch: km.ProducerEpoch,
			Commit: km.Committed, CoordinatorEpoch: km.CoordinatorEpoch, Partitions: tps}})
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = km.ProducerID
		for _, r := range out[0] {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = r.TP.Topic
			rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
			rp.Partition, rp.ErrorCode = r.TP.Partition, errorCode(r.Err)
			rt.Partitions = append(rt.Partitions, rp)
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}

func writeMarkersRequest(version int16, pid int64, commit bool, partition int32) *kmsg.WriteTxnMarkersRequest {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.SetVersion(version)
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.Committed, m.CoordinatorEpoch = pid, commit, 1
	t := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	t.Topic, t.Partitions = "t", []int32{partition}
	m.Topics = append(m.Topics, t)
	req.Markers = append(req.Markers, m)
	return req
}

// txnRegistry is the data plane of dataPlaneWithManager with a marker
// writer over its replica manager.
func txnRegistry(t *testing.T) (*Registry, *markersVia) {
	t.Helper()
	_, rm := dataPlaneWithManager(t, 1000)
	w := &markersVia{rm: rm}
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(BrokerDeps{
		Data: &DataPlaneDeps{Partitions: rm, FetchSessionCacheSlots: 1000, Markers: w},
	}))
	if err != nil {
		t.Fatal(err)
	}
	return r, w
}

// TestTransactionalProduceNeedsTransactionalID: transactional records
// without a transactional id fail the whole request with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (Kafka's authorizer refuses a null
// id); with one they are appended.
func TestTransactionalProduceNeedsTransactionalID(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	for _, v := range []int16{3, 9, 13} {
		req := produceRequest(v, -1, "t", 0, txnTestBatch(t, 7, 0, 1))
		plain := produceRequest(v, -1, "t", 1, testBatch(t, 1))
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, plain.Topics[0].Partitions...)
		resp := reply[*kmsg.ProduceResponse](t, r, req)
		for _, p := range resp.Topics[0].Partitions {
			if p.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code || p.BaseOffset != -1 {
				t.Fatalf("v%d partition %d without a transactional id: %+v", v, p.Partition, p)
			}
		}
	}
	req := produceRequest(11, -1, "t", 0, txnTestBatch(t, 7, 0, 2))
	req.TransactionID = kmsg.StringPtr("tx")
	if p := reply[*kmsg.ProduceResponse](t, r, req).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("transactional produce: %+v", p)
	}
}

// TestReadCommittedThroughHandlers: Fetch read_committed stops at the last
// stable offset and lists the aborted transactions; read_uncommitted gets a
// null list; ListOffsets LATEST answers the LSO for read_committed; the
// markers come through WriteTxnMarkers.
func TestReadCommittedThroughHandlers(t *testing.T) {
	r, w := txnRegistry(t)
	produce := func(b []byte) {
		t.Helper()
		req := produceRequest(11, -1, "t", 0, b)
		req.TransactionID = kmsg.StringPtr("tx")
		if p := reply[*kmsg.ProduceResponse](t, r, req).Topics[0].Partitions[0]; p.ErrorCode != 0 {
			t.Fatalf("produce: %+v", p)
		}
	}
	produce(txnTestBatch(t, 7, 0, 2)) // 0-1
	produce(txnTestBatch(t, 8, 0, 1)) // 2
	for v := int16(1); v <= 2; v++ {
		resp := reply[*kmsg.WriteTxnMarkersResponse](t, r, writeMarkersRequest(v, 7, false, 0)) // 3 (v2: 4 below)
		if len(resp.Markers) != 1 || resp.Markers[0].Topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("WriteTxnMarkers v%d: %+v", v, resp)
		}
		if got := w.reqs[len(w.reqs)-1].Version; got != v {
			t.Fatalf("writer got v%d, want v%d", got, v)
		}
	}
	req := fetchRequest(11, 0, -1, 0)
	req.IsolationLevel = 1
	p := fetch(t, r, req).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.LastStableOffset != 2 || p.HighWatermark != 5 || len(p.AbortedTransactions) != 1 ||
		p.AbortedTransactions[0].ProducerID != 7 || p.AbortedTransactions[0].FirstOffset != 0 {
		t.Fatalf("read_committed: %+v", p)
	}
	req.IsolationLevel = 0
	if p := fetch(t, r, req).Topics[0].Partitions[0]; p.AbortedTransactions != nil || p.HighWatermark != 5 {
		t.Fatalf("read_uncommitted: aborted %+v", p.AbortedTransactions)
	}
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.SetVersion(9)
	lo.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	lp := kmsg.NewListOffsetsRequestTopicPartition()
	lp.Partition, lp.Timestamp, lp.CurrentLeaderEpoch = 0, -1, -1
	lt.Partitions = append(lt.Partitions, lp)
	lo.Topics = append(lo.Topics, lt)
	for level, want := range map[int8]int64{0: 5, 1: 2} {
		lo.IsolationLevel = level
		if p := reply[*kmsg.ListOffsetsResponse](t, r, lo).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.Offset != want {
			t.Fatalf("ListOffsets LATEST isolation %d: %+v, want %d", level, p, want)
		}
	}
}

// TestDescribeProducers answers each partition's producers, and Kafka's
// topic and partition errors.
func TestDescribeProducers(t *testing.T) {
	r, _ := txnRegistry(t)
	req := produceRequest(11, -1, "t", 0, txnTestBatch(t, 7, 0, 3))
	req.TransactionID = kmsg.StringPtr("tx")
	reply[*kmsg.ProduceResponse](t, r, req)
	idem := recordstest.Batch(t, recordstest.Values(dataTestStart.UnixMilli()+5, "a"), recordstest.Producer(9, 2, 0))
	reply[*kmsg.ProduceResponse](t, r, produceRequest(11, -1, "t", 0, idem))
	reply[*kmsg.WriteTxnMarkersResponse](t, r, writeMarkersRequest(1, 7, true, 0))

	dp := kmsg.NewPtrDescribeProducersRequest()
	for _, topic := range []struct {
		name  string
		parts []int32
	}{{"t", []int32{0, 1, 7}}, {"nope", []int32{0}}, {"bad/name", []int32{0}}} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic.name, topic.parts
		dp.Topics = append(dp.Topics, rt)
	}
	resp := reply[*kmsg.DescribeProducersResponse](t, r, dp)
	if len(resp.Topics) != 3 || len(resp.Topics[0].Partitions) != 3 {
		t.Fatalf("response shape: %+v", resp)
	}
	p0 := resp.Topics[0].Partitions[0]
	if p0.ErrorCode != 0 || len(p0.ActiveProducers) != 2 {
		t.Fatalf("t-0: %+v", p0)
	}
	got7, got9 := p0.ActiveProducers[0], p0.ActiveProducers[1]
	if got7.ProducerID != 7 || got7.ProducerEpoch != 0 || got7.LastSequence != 2 || got7.CoordinatorEpoch != 1 ||
		got7.CurrentTxnStartOffset != -1 || got7.LastTimestamp != dataTestStart.UnixMilli() {
		t.Fatalf("producer 7: %+v", got7)
	}
	if got9.ProducerID != 9 || got9.ProducerEpoch != 2 || got9.LastSequence != 0 || got9.CoordinatorEpoch != -1 ||
		got9.CurrentTxnStartOffset != -1 || got9.LastTimestamp != dataTestStart.UnixMilli()+5 {
		t.Fatalf("producer 9: %+v", got9)
	}
	if p := resp.Topics[0].Partitions[1]; p.ErrorCode != 0 || len(p.ActiveProducers) != 0 {
		t.Fatalf("t-1: %+v", p)
	}
	if p := resp.Topics[0].Partitions[2]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.ErrorMessage != nil {
		t.Fatalf("t-7: %+v", p)
	}
	if p := resp.Topics[1].Partitions[0]; p.ErrorCode != kerr.UnknownTopicOrPartition.Code || p.ErrorMessage == nil {
		t.Fatalf("unknown topic: %+v", p)
	}
	if p := resp.Topics[2].Partitions[0]; p.ErrorCode != kerr.InvalidTopicException.Code || p.ErrorMessage == nil ||
		*p.ErrorMessage != `Topic name "bad/name" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'` {
		t.Fatalf("invalid topic: %+v", p)
	}
}
