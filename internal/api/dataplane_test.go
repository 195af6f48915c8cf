package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

var dataTestStart = time.UnixMilli(1_700_000_000_000)

var topicTID = replicationtest.TopicID(1)

// dataPlaneRegistry serves the data-plane APIs over a real ReplicaManager
// hosting topic "t" (2 partitions, leader epoch 3) and the internal topic
// "__consumer_offsets" (1 partition) on broker 1.
func dataPlaneRegistry(t testing.TB, sessionSlots int) *Registry {
	t.Helper()
	r, _ := dataPlaneWithManager(t, sessionSlots)
	return r
}

// dataPlaneWithManager is dataPlaneRegistry that also returns the replica
// manager, for tests that change the metadata.
func dataPlaneWithManager(t testing.TB, sessionSlots int) (*Registry, *replication.ReplicaManager) {
	t.Helper()
	fsys := vfs.NewMem()
	clk := clock.NewManual(dataTestStart)
	logs := replicationtest.NewMemLogs(fsys, clk)
	rm, err := replication.NewReplicaManager(replication.Options{
		BrokerID: 1, FS: fsys, Logs: logs, Clock: clk, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	delta, image, err := replicationtest.Image(1,
		replicationtest.Topic{Name: "t", ID: topicTID, Partitions: 2, LeaderEpoch: 3},
		replicationtest.Topic{Name: "__consumer_offsets", ID: replicationtest.TopicID(2), Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	rm.ApplyDelta(delta, image)
	t.Cleanup(func() {
		rm.Close()
		if err := logs.Close(); err != nil {
			t.Errorf("close logs: %v", err)
		}
	})
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(BrokerDeps{
		Data: &DataPlaneDeps{Partitions: rm, FetchSessionCacheSlots: sessionSlots, Clock: clk},
	}))
	if err != nil {
		t.Fatal(err)
	}
	return r, rm
}

// serve encodes req like a client and routes it like the server.
func serve(t *testing.T, r *Registry, req kmsg.Request) Response {
	t.Helper()
	wire := kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, 7)
	h, body, err := protocol.ParseRequestHeader(wire[4:])
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Serve(context.Background(), &ConnState{Listener: "PLAINTEXT"}, h, body)
	if err != nil {
		t.Fatalf("serve key %d v%d: %v", req.Key(), req.GetVersion(), err)
	}
	if !resp.Valid() {
		t.Fatal("handler returned an invalid response")
	}
	return resp
}

// reply serves req and decodes its kmsg answer like a client.
func reply[T kmsg.Response](t *testing.T, r *Registry, req kmsg.Request) T {
	t.Helper()
	resp := serve(t, r, req)
	if resp.Body() == nil {
		t.Fatalf("key %d: want a kmsg body, got close=%v noResponse=%v", req.Key(), resp.CloseReason(), resp.IsNoResponse())
	}
	decoded := req.ResponseKind()
	decoded.SetVersion(req.GetVersion())
	if err := decoded.ReadFrom(resp.Body().AppendTo(nil)); err != nil {
		t.Fatalf("decode our answer: %v", err)
	}
	return decoded.(T)
}

// fetch serves a Fetch and decodes the streamed body with kmsg.
func fetch(t *testing.T, r *Registry, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	t.Helper()
	resp := serve(t, r, req)
	stream := resp.StreamBody()
	if stream == nil {
		t.Fatalf("fetch must stream its body, got close=%v", resp.CloseReason())
	}
	var buf bytes.Buffer
	n, err := stream.WriteFrame(&buf, nil)
	if err != nil || n != stream.Len() {
		t.Fatalf("write body: %d of %d bytes, %v", n, stream.Len(), err)
	}
	decoded := kmsg.NewPtrFetchResponse()
	decoded.SetVersion(req.Version)
	if err := decoded.ReadFrom(buf.Bytes()); err != nil {
		t.Fatalf("kmsg cannot decode our fetch response: %v", err)
	}
	return decoded
}

func testBatch(t testing.TB, n int) []byte {
	t.Helper()
	return recordstest.Batch(t, recordstest.N(n, func(i int) recordstest.Record {
		return recordstest.Record{Timestamp: dataTestStart.UnixMilli() + int64(i), Value: []byte{byte(i)}}
	}))
}

func produceRequest(version, acks int16, topic string, partition int32, batch []byte) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(version)
	req.Acks = acks
	req.TimeoutMillis = 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	if version >= 13 {
		rt.TopicID = topicTID
	}
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

func fetchRequest(version int16, sessionID, epoch int32, parts ...int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(version)
	req.ReplicaID = -1
	req.ReplicaState.ID = -1
	req.MaxBytes = 1 << 20
	req.SessionID, req.SessionEpoch = sessionID, epoch
	if len(parts) == 0 {
		return req
	}
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "t"
	rt.TopicID = topicTID
	for _, p := range parts {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p
		rp.CurrentLeaderEpoch = -1
		rp.LastFetchedEpoch = -1
		rp.PartitionMaxBytes = 1 << 20
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	return req
}

func TestDataPlaneAdvertised(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	for _, want := range []VersionRange{{0, 0, 13}, {1, 4, 18}, {2, 1, 11}, {21, 0, 2}, {23, 2, 4}} {
		if got, ok := r.Supported(want.Key); !ok || got != want {
			t.Errorf("key %d served %+v (%v), want %+v", want.Key, got, ok, want)
		}
	}
}

func TestProduceThenFetchEveryVersion(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	for v := int16(3); v <= 13; v++ {
		resp := reply[*kmsg.ProduceResponse](t, r, produceRequest(v, -1, "t", 0, testBatch(t, 2)))
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.BaseOffset != int64(v-3)*2 || (v >= 5 && p.LogStartOffset != 0) || p.LogAppendTime != -1 {
			t.Fatalf("produce v%d: %+v", v, p)
		}
		if v >= 13 && resp.Topics[0].TopicID != topicTID {
			t.Fatalf("produce v13 must echo the topic id")
		}
	}
	for v := int16(4); v <= 18; v++ {
		resp := fetch(t, r, fetchRequest(v, 0, -1, 0))
		if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("fetch v%d: %+v", v, resp)
		}
		p := resp.Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.HighWatermark != 22 || p.LastStableOffset != 22 || (v >= 5 && p.LogStartOffset != 0) || p.PreferredReadReplica != -1 {
			t.Fatalf("fetch v%d partition: %+v", v, p)
		}
		if n := countRecords(t, p.RecordBatches); n != 22 {
			t.Fatalf("fetch v%d: %d records, want 22", v, n)
		}
	}
}

// countRecords decodes batches the way a client does.
func countRecords(t *testing.T, raw []byte) int {
	t.Helper()
	n := 0
	rest, err := records.Batches(raw, func(_ records.Header, batch []byte) error {
		return records.ForEachRecord(batch, func(records.Record) error { n++; return nil })
	})
	if err != nil || rest != len(raw) {
		t.Fatalf("batches: %v (rest %d of %d)", err, rest, len(raw))
	}
	return n
}

func TestProduceRefusals(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	if resp := serve(t, r, produceRequest(2, 1, "t", 0, testBatch(t, 1))); resp.CloseReason() == nil {
		t.Fatal("produce v2 must close the connection, as Kafka 4 does")
	}
	if resp := serve(t, r, produceRequest(9, 0, "t", 0, testBatch(t, 1))); !resp.IsNoResponse() {
		t.Fatal("acks=0 must not be answered")
	}
	if resp := serve(t, r, produceRequest(9, 0, "nope", 0, testBatch(t, 1))); resp.CloseReason() == nil {
		t.Fatal("a failed acks=0 produce must close the connection")
	}
	corrupt := testBatch(t, 1)
	corrupt[len(corrupt)-1] ^= 1
	cases := []struct {
		name string
		req  *kmsg.ProduceRequest
		want *kerr.Error
	}{
		{"acks 2", produceRequest(9, 2, "t", 0, testBatch(t, 1)), kerr.InvalidRequiredAcks},
		{"unknown topic", produceRequest(9, 1, "nope", 0, testBatch(t, 1)), kerr.UnknownTopicOrPartition},
		{"unknown partition", produceRequest(9, 1, "t", 7, testBatch(t, 1)), kerr.UnknownTopicOrPartition},
		{"internal topic", produceRequest(9, 1, "__consumer_offsets", 0, testBatch(t, 1)), kerr.InvalidTopicException},
		{"corrupt", produceRequest(9, 1, "t", 0, corrupt), kerr.CorruptMessage},
	}
	unknownID := produceRequest(13, 1, "", 0, testBatch(t, 1))
	unknownID.Topics[0].TopicID = [16]byte{9}
	cases = append(cases, struct {
		name string
		req  *kmsg.ProduceRequest
		want *kerr.Error
	}{"unknown topic id", unknownID, kerr.UnknownTopicID})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := reply[*kmsg.ProduceResponse](t, r, c.req).Topics[0].Partitions[0]
			if p.ErrorCode != c.want.Code || p.BaseOffset != -1 {
				t.Fatalf("got code %d base %d, want %v and -1", p.ErrorCode, p.BaseOffset, c.want)
			}
		})
	}
	p := reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, testBatch(t, 1))).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || p.BaseOffset != 1 {
		t.Fatalf("after refusals only the acks=0 batch is in the log: %+v", p)
	}
}

func TestFetchIncrementalSession(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, testBatch(t, 3)))

	full := fetch(t, r, fetchRequest(13, 0, 0, 0, 1))
	if full.SessionID == 0 || len(full.Topics) != 1 || len(full.Topics[0].Partitions) != 2 {
		t.Fatalf("full fetch: session %d, %+v", full.SessionID, full.Topics)
	}
	sid := full.SessionID
	// Nothing changed: an incremental fetch answers no partitions. The
	// fetcher's position on partition 0 moves to 3.
	inc := fetchRequest(13, sid, 1, 0)
	inc.Topics[0].Partitions[0].FetchOffset = 3
	if got := fetch(t, r, inc); got.SessionID != sid || got.ErrorCode != 0 || len(got.Topics) != 0 {
		t.Fatalf("incremental without news: %+v", got)
	}
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 1, testBatch(t, 2)))
	got := fetch(t, r, fetchRequest(13, sid, 2))
	if len(got.Topics) != 1 || len(got.Topics[0].Partitions) != 1 || got.Topics[0].Partitions[0].Partition != 1 {
		t.Fatalf("incremental after produce to partition 1: %+v", got.Topics)
	}
	if n := countRecords(t, got.Topics[0].Partitions[0].RecordBatches); n != 2 {
		t.Fatalf("partition 1 records %d, want 2", n)
	}
	if e := fetch(t, r, fetchRequest(13, sid, 7)); e.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("wrong epoch: code %d", e.ErrorCode)
	}
	if e := fetch(t, r, fetchRequest(12, sid, 3)); e.ErrorCode != kerr.FetchSessionTopicIDError.Code {
		t.Fatalf("names in an id session: code %d", e.ErrorCode)
	}
	if e := fetch(t, r, fetchRequest(13, sid+1, 1)); e.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: code %d", e.ErrorCode)
	}
	// Epoch -1 closes the session and fetches without one.
	if closed := fetch(t, r, fetchRequest(13, sid, -1, 0)); closed.SessionID != 0 || closed.ErrorCode != 0 {
		t.Fatalf("closing fetch: %+v", closed)
	}
	if e := fetch(t, r, fetchRequest(13, sid, 3)); e.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session still answers: code %d", e.ErrorCode)
	}
}

func TestFetchPartitionErrors(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	req := fetchRequest(13, 0, -1, 0)
	req.Topics[0].Partitions[0].FetchOffset = 10
	unknown := kmsg.NewFetchRequestTopic()
	unknown.TopicID = [16]byte{42}
	unknown.Partitions = []kmsg.FetchRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, PartitionMaxBytes: 100}}
	req.Topics = append(req.Topics, unknown)
	req.MaxWaitMillis, req.MinBytes = 10000, 1000
	start := time.Now()
	resp := fetch(t, r, req)
	if time.Since(start) > 5*time.Second {
		t.Fatal("errors must be answered without waiting")
	}
	if p := resp.Topics[0].Partitions[0]; p.ErrorCode != kerr.OffsetOutOfRange.Code || p.HighWatermark != -1 {
		t.Fatalf("fetch beyond the log end: %+v", p)
	}
	if p := resp.Topics[1].Partitions[0]; p.ErrorCode != kerr.UnknownTopicID.Code {
		t.Fatalf("unknown topic id: %+v", p)
	}
	stale := fetchRequest(12, 0, -1, 0)
	stale.Topics[0].Partitions[0].CurrentLeaderEpoch = 2
	if p := fetch(t, r, stale).Topics[0].Partitions[0]; p.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale leader epoch: %+v", p)
	}
}

func TestFetchReadCommittedHasEmptyAbortedList(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, testBatch(t, 1)))
	req := fetchRequest(11, 0, -1, 0)
	req.IsolationLevel = 1
	p := fetch(t, r, req).Topics[0].Partitions[0]
	if p.AbortedTransactions == nil || len(p.AbortedTransactions) != 0 || p.LastStableOffset != 1 {
		t.Fatalf("read_committed: aborted %v, LSO %d", p.AbortedTransactions, p.LastStableOffset)
	}
}

func TestFetchLongPollWakesOnProduce(t *testing.T) {
	r, rm := dataPlaneWithManager(t, 1000)
	req := fetchRequest(13, 0, -1, 1)
	req.MaxWaitMillis, req.MinBytes = 20000, 1
	got := make(chan *kmsg.FetchResponse, 1)
	go func() { got <- fetch(t, r, req) }()
	testutil.Eventually(t, 5*time.Second, func() bool { _, n := rm.PurgatorySizes(); return n == 1 }, "fetch parked")
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 1, testBatch(t, 4)))
	select {
	case resp := <-got:
		if n := countRecords(t, resp.Topics[0].Partitions[0].RecordBatches); n != 4 {
			t.Fatalf("long poll returned %d records, want 4", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("produce did not wake the long poll")
	}
}

func TestListOffsetsDeleteRecordsOffsetForLeaderEpoch(t *testing.T) {
	r := dataPlaneRegistry(t, 1000)
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, testBatch(t, 5)))

	lo := kmsg.NewPtrListOffsetsRequest()
	lo.SetVersion(9)
	lo.ReplicaID = -1
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	for _, ts := range []int64{-2, -1, -3} {
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Timestamp, p.CurrentLeaderEpoch = ts, 3
		lt.Partitions = append(lt.Partitions, p)
	}
	lt.Partitions[1].Partition = 0
	lo.Topics = append(lo.Topics, lt)
	// The same partition three times: every answer is INVALID_REQUEST.
	for _, p := range reply[*kmsg.ListOffsetsResponse](t, r, lo).Topics[0].Partitions {
		if p.ErrorCode != kerr.InvalidRequest.Code {
			t.Fatalf("duplicate partition: %+v", p)
		}
	}
	for i, want := range []struct{ offset, ts int64 }{{0, -1}, {5, -1}, {4, dataTestStart.UnixMilli() + 4}} {
		lo.Topics[0].Partitions = []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: 3, Timestamp: []int64{-2, -1, -3}[i]}}
		p := reply[*kmsg.ListOffsetsResponse](t, r, lo).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.Offset != want.offset || p.Timestamp != want.ts || p.LeaderEpoch != 3 {
			t.Fatalf("list offsets %d: %+v, want offset %d timestamp %d epoch 3", i, p, want.offset, want.ts)
		}
	}

	dr := kmsg.NewPtrDeleteRecordsRequest()
	dr.SetVersion(2)
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "t"
	dt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 2}, {Partition: 1, Offset: 9}}
	dr.Topics = append(dr.Topics, dt)
	dresp := reply[*kmsg.DeleteRecordsResponse](t, r, dr).Topics[0].Partitions
	if dresp[0].ErrorCode != 0 || dresp[0].LowWatermark != 2 {
		t.Fatalf("delete records: %+v", dresp[0])
	}
	if dresp[1].ErrorCode != kerr.OffsetOutOfRange.Code || dresp[1].LowWatermark != -1 {
		t.Fatalf("delete beyond the high watermark: %+v", dresp[1])
	}

	oe := kmsg.NewPtrOffsetForLeaderEpochRequest()
	oe.SetVersion(4)
	oe.ReplicaID = -1
	ot := kmsg.NewOffsetForLeaderEpochRequestTopic()
	ot.Topic = "t"
	ot.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{
		{Partition: 0, CurrentLeaderEpoch: 3, LeaderEpoch: 3},
		{Partition: 0, CurrentLeaderEpoch: 4, LeaderEpoch: 3},
	}
	oe.Topics = append(oe.Topics, ot)
	oresp := reply[*kmsg.OffsetForLeaderEpochResponse](t, r, oe).Topics[0].Partitions
	if oresp[0].ErrorCode != 0 || oresp[0].LeaderEpoch != 3 || oresp[0].EndOffset != 5 {
		t.Fatalf("offset for leader epoch: %+v", oresp[0])
	}
	if oresp[1].ErrorCode != kerr.UnknownLeaderEpoch.Code || oresp[1].EndOffset != -1 {
		t.Fatalf("future current epoch: %+v", oresp[1])
	}
}

func TestFetchSessionCacheEviction(t *testing.T) {
	clk := clock.NewManual(dataTestStart)
	c := newFetchSessionCache(1, time.Minute, clk)
	part := func(p int32) sessionPartition {
		return sessionPartition{key: sessionKey{Name: "t", Partition: p}, name: "t", highWatermark: -1, logStartOffset: -1}
	}
	open := func(privileged bool, n int) int32 {
		parts := make([]sessionPartition, n)
		for i := range parts {
			parts[i] = part(int32(i))
		}
		fc := c.newContext(0, 0, false, privileged, parts, nil)
		id, _ := c.complete(&fc, make([]partitionOutcome, n))
		return id
	}
	first := open(false, 2)
	if first == 0 {
		t.Fatal("an empty cache must open a session")
	}
	if id := open(false, 1); id != 0 {
		t.Fatal("a smaller consumer session must not evict a larger one")
	}
	if id := open(true, 1); id == 0 || c.size() != 1 {
		t.Fatal("a follower's session evicts a consumer's")
	}
	clk.Advance(2 * time.Minute)
	if id := open(false, 1); id == 0 {
		t.Fatal("a stale session is evicted for any new one")
	}
	none := newFetchSessionCache(0, time.Minute, clk)
	fc := none.newContext(0, 0, false, false, []sessionPartition{part(0)}, nil)
	if id, inc := none.complete(&fc, make([]partitionOutcome, 1)); id != 0 || !inc[0] {
		t.Fatal("without slots fetches run sessionless and answer everything")
	}
}

func TestFetchSessionsDisabledWithZeroSlots(t *testing.T) {
	r := dataPlaneRegistry(t, 0)
	resp := fetch(t, r, fetchRequest(13, 0, 0, 0, 1))
	if resp.ErrorCode != 0 || resp.SessionID != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("max.incremental.fetch.session.cache.slots=0: session %d, %+v", resp.SessionID, resp.Topics)
	}
}

// TestFollowerFetch gives t-0 a second replica (broker 2): its fetches read
// past the high watermark to the log end offset, and its position moves the
// high watermark that consumers see; a broker that is not a replica is
// refused.
func TestFollowerFetch(t *testing.T) {
	r, rm := dataPlaneWithManager(t, 1000)
	d := metadata.NewDelta(rm.Image())
	if err := d.Replay(100, 2, &metadata.PartitionChangeRecord{TopicID: topicTID, Partition: 0,
		Leader: 1, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); err != nil {
		t.Fatal(err)
	}
	rm.ApplyDelta(d, d.Apply())
	reply[*kmsg.ProduceResponse](t, r, produceRequest(9, 1, "t", 0, testBatch(t, 3)))

	consumer := fetch(t, r, fetchRequest(15, 0, -1, 0)).Topics[0].Partitions[0]
	if consumer.HighWatermark != 0 || len(consumer.RecordBatches) != 0 {
		t.Fatalf("consumer before the follower caught up: HW %d, %d bytes", consumer.HighWatermark, len(consumer.RecordBatches))
	}
	follower := fetchRequest(15, 0, -1, 0)
	follower.ReplicaState.ID, follower.ReplicaState.Epoch = 2, 1
	p := fetch(t, r, follower).Topics[0].Partitions[0]
	if p.ErrorCode != 0 || countRecords(t, p.RecordBatches) != 3 {
		t.Fatalf("follower fetch: %+v", p)
	}
	follower.Topics[0].Partitions[0].FetchOffset = 3
	if p := fetch(t, r, follower).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.HighWatermark != 3 {
		t.Fatalf("follower caught up: code %d HW %d, want HW 3", p.ErrorCode, p.HighWatermark)
	}
	if c := fetch(t, r, fetchRequest(15, 0, -1, 0)).Topics[0].Partitions[0]; c.HighWatermark != 3 || countRecords(t, c.RecordBatches) != 3 {
		t.Fatalf("consumer after the follower caught up: HW %d", c.HighWatermark)
	}
	stranger := fetchRequest(15, 0, -1, 0)
	stranger.ReplicaState.ID = 9
	if p := fetch(t, r, stranger).Topics[0].Partitions[0]; p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("fetch from a broker that is not a replica: code %d", p.ErrorCode)
	}
}
