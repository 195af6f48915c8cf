package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareWire speaks the share-group protocol (KIP-932) with raw requests,
// as a share consumer does, to check what a real client cannot be made to
// send: stale epochs, overlapping or unknown acknowledgements, records of
// another member.
type shareWire struct {
	t     *testing.T
	cl    *kgo.Client
	group string
	topic [16]byte
}

// member heartbeats as id until it is assigned the topic's partition.
func (w *shareWire) member(ctx context.Context, id, topic string) {
	w.t.Helper()
	epoch := int32(0)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req := kmsg.NewPtrShareGroupHeartbeatRequest()
		req.GroupID, req.MemberID, req.MemberEpoch = w.group, id, epoch
		req.SubscribedTopicNames = []string{topic}
		resp, err := req.RequestWith(ctx, w.cl)
		if err == nil && resp.ErrorCode == 0 {
			epoch = resp.MemberEpoch
			if a := resp.Assignment; a != nil && len(a.TopicPartitions) > 0 {
				w.topic = a.TopicPartitions[0].TopicID
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.t.Fatalf("member %s was never assigned a partition of %s", id, topic)
}

// fetch sends a ShareFetch of partition 0 with acks; it returns the top
// error code, the partition's fetch and acknowledgement codes and the
// acquired ranges.
func (w *shareWire) fetch(ctx context.Context, member string, epoch int32, maxWait int32, acks ...kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) (int16, int16, int16, []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord) {
	w.t.Helper()
	req := kmsg.NewPtrShareFetchRequest()
	req.SetVersion(1)
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(w.group), kmsg.StringPtr(member), epoch
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes, req.MaxRecords, req.BatchSize = maxWait, 1, 1<<20, 500, 500
	t := kmsg.NewShareFetchRequestTopic()
	t.TopicID = w.topic
	p := kmsg.NewShareFetchRequestTopicPartition()
	p.AcknowledgementBatches = acks
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, w.cl)
	if err != nil {
		w.t.Fatalf("ShareFetch: %v", err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			return resp.ErrorCode, rp.ErrorCode, rp.AcknowledgeErrorCode, rp.AcquiredRecords
		}
	}
	return resp.ErrorCode, 0, 0, nil
}

// ack sends a ShareAcknowledge of partition 0; it returns the top and the
// partition's error codes.
func (w *shareWire) ack(ctx context.Context, member string, epoch int32, batches ...kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch) (int16, int16) {
	w.t.Helper()
	req := kmsg.NewPtrShareAcknowledgeRequest()
	req.SetVersion(1)
	req.GroupID, req.MemberID, req.ShareSessionEpoch = kmsg.StringPtr(w.group), kmsg.StringPtr(member), epoch
	t := kmsg.NewShareAcknowledgeRequestTopic()
	t.TopicID = w.topic
	p := kmsg.NewShareAcknowledgeRequestTopicPartition()
	p.AcknowledgementBatches = batches
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, w.cl)
	if err != nil {
		w.t.Fatalf("ShareAcknowledge: %v", err)
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			return resp.ErrorCode, rp.ErrorCode
		}
	}
	return resp.ErrorCode, 0
}

// createShareTopic creates a one-partition topic.
func createShareTopic(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) {
	t.Helper()
	ct := kmsg.NewPtrCreateTopicsRequest()
	tt := kmsg.NewCreateTopicsRequestTopic()
	tt.Topic, tt.NumPartitions, tt.ReplicationFactor = topic, 1, 1
	ct.Topics = append(ct.Topics, tt)
	if _, err := ct.RequestWith(ctx, cl); err != nil {
		t.Fatal(err)
	}
}

// setGroupConfigs sets a group's configs, as kafka-configs --entity-type
// groups does.
func setGroupConfigs(ctx context.Context, t *testing.T, cl *kgo.Client, group string, configs map[string]string) {
	t.Helper()
	ac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for k, v := range configs {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = k, kmsg.StringPtr(v)
		res.Configs = append(res.Configs, c)
	}
	ac.Resources = append(ac.Resources, res)
	if resp, err := ac.RequestWith(ctx, cl); err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("group configs of %s: %v %+v", group, err, resp)
	}
}

func fetchAck(first, last int64, types ...int8) kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch {
	b := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, types
	return b
}

func shareAck(first, last int64, types ...int8) kmsg.ShareAcknowledgeRequestTopicPartitionAcknowledgementBatch {
	b := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
	b.FirstOffset, b.LastOffset, b.AcknowledgeTypes = first, last, types
	return b
}

func wantCode(t *testing.T, what string, got int16, want error) {
	t.Helper()
	code := int16(0)
	if want != nil {
		code = want.(*kerr.Error).Code
	}
	if got != code {
		t.Fatalf("%s: code %d (%v), want %d (%v)", what, got, kerr.ErrorForCode(got), code, want)
	}
}

func acquiredString(recs []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord) string {
	s := ""
	for _, r := range recs {
		s += fmt.Sprintf("[%d-%d x%d]", r.FirstOffset, r.LastOffset, r.DeliveryCount)
	}
	return s
}

// TestShareGroupWire drives one share partition through acquisition,
// Kafka's refusals of bad acknowledgements and session epochs, release,
// reject and redelivery, and a restart that must keep what was
// acknowledged and deliver again what was only acquired.
func TestShareGroupWire(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	srv := startServer(t, dir, port)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := newClient(t, srv.addr)
	const topic = "work"
	createShareTopic(ctx, t, cl, topic)
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	setGroupConfigs(ctx, t, cl, "q", map[string]string{"share.auto.offset.reset": "earliest"})

	w := &shareWire{t: t, cl: cl, group: "q"}
	const a, b = "member-a-0000000000000", "member-b-0000000000000"
	w.member(ctx, a, topic)
	w.member(ctx, b, topic)

	top, code, _, got := w.fetch(ctx, a, 0, 5000)
	wantCode(t, "a's first fetch", top, nil)
	wantCode(t, "a's first fetch partition", code, nil)
	if acquiredString(got) != "[0-9 x1]" {
		t.Fatalf("a acquired %s, want [0-9 x1]", acquiredString(got))
	}
	// b opens its session; everything is a's.
	top, _, _, got = w.fetch(ctx, b, 0, 100)
	wantCode(t, "b's first fetch", top, nil)
	if len(got) != 0 {
		t.Fatalf("b acquired %s while a holds every record", acquiredString(got))
	}

	// Session epochs: a's next epoch is 1.
	top, _, _, _ = w.fetch(ctx, a, 7, 0)
	wantCode(t, "ShareFetch at a wrong epoch", top, kerr.InvalidShareSessionEpoch)
	top, _ = w.ack(ctx, a, 0, shareAck(0, 0, 1))
	wantCode(t, "ShareAcknowledge at epoch 0", top, kerr.InvalidShareSessionEpoch)
	top, _ = w.ack(ctx, "member-c-0000000000000", 1, shareAck(0, 0, 1))
	wantCode(t, "ShareAcknowledge without a session", top, kerr.ShareSessionNotFound)

	// Bad acknowledgements, refused whole; a's session moves on each time.
	_, code = w.ack(ctx, a, 1, shareAck(0, 5, 1), shareAck(3, 7, 1))
	wantCode(t, "overlapping ranges", code, kerr.InvalidRequest)
	_, code = w.ack(ctx, a, 2, shareAck(0, 0, 9))
	wantCode(t, "unknown acknowledgement type", code, kerr.InvalidRequest)
	_, code = w.ack(ctx, b, 1, shareAck(0, 0, 1))
	wantCode(t, "b accepting a's record", code, kerr.InvalidRecordState)

	// a releases 0, accepts 1-8, rejects 9.
	types := []int8{2, 1, 1, 1, 1, 1, 1, 1, 1, 3}
	_, code = w.ack(ctx, a, 3, shareAck(0, 9, types...))
	wantCode(t, "a's acknowledgements", code, nil)
	_, code = w.ack(ctx, a, 4, shareAck(1, 1, 1))
	wantCode(t, "accepting an accepted record again", code, kerr.InvalidRecordState)

	// b gets the released record, delivered for the second time.
	_, _, _, got = w.fetch(ctx, b, 2, 5000)
	if acquiredString(got) != "[0-0 x2]" {
		t.Fatalf("b acquired %s, want the released record [0-0 x2]", acquiredString(got))
	}

	// A restart keeps what was acknowledged; the acquired record 0 comes
	// back (acquisition is not persisted).
	srv.stop()
	srv = startServer(t, dir, port)
	cl = newClient(t, srv.addr)
	w.cl = cl
	w.member(ctx, a, topic)
	top, code, _, got = w.fetch(ctx, a, 0, 10000)
	wantCode(t, "fetch after restart", top, nil)
	wantCode(t, "fetch after restart partition", code, nil)
	if len(got) != 1 || got[0].FirstOffset != 0 || got[0].LastOffset != 0 {
		t.Fatalf("after the restart a acquired %s, want only record 0", acquiredString(got))
	}
	_, _, ackCode, _ := w.fetch(ctx, a, 1, 0, fetchAck(0, 0, 1))
	wantCode(t, "accept piggybacked on ShareFetch", ackCode, nil)
	_, _, _, got = w.fetch(ctx, a, 2, 500)
	if len(got) != 0 {
		t.Fatalf("acquired %s after every record was accepted or rejected", acquiredString(got))
	}
}

// TestShareGroupReadCommitted: with share.isolation.level=read_committed a
// share group is handed committed records only; an aborted transaction's
// records are never acquired (Kafka archives them).
func TestShareGroupReadCommitted(t *testing.T) {
	srv := startServer(t, t.TempDir(), freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := newClient(t, srv.addr)
	const topic = "txwork"
	createShareTopic(ctx, t, cl, topic)
	txn := newClient(t, srv.addr, kgo.TransactionalID("share-txn"), kgo.DefaultProduceTopic(topic))
	for _, commit := range []bool{true, false, true} {
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := txn.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprint(commit, i))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	setGroupConfigs(ctx, t, cl, "rc", map[string]string{"share.auto.offset.reset": "earliest", "share.isolation.level": "read_committed"})
	w := &shareWire{t: t, cl: cl, group: "rc"}
	const a = "member-a-0000000000000"
	w.member(ctx, a, topic)
	// Offsets: 0-2 committed, 3 marker, 4-6 aborted, 7 marker, 8-10
	// committed, 11 marker. Acquire until nothing more comes.
	var got []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord
	for epoch := int32(0); epoch < 5; epoch++ {
		_, code, _, recs := w.fetch(ctx, a, epoch, 500)
		wantCode(t, "read_committed fetch", code, nil)
		got = append(got, recs...)
	}
	acquired := map[int64]bool{}
	for _, r := range got {
		for o := r.FirstOffset; o <= r.LastOffset; o++ {
			acquired[o] = true
		}
	}
	for _, o := range []int64{0, 1, 2, 8, 9, 10} {
		if !acquired[o] {
			t.Errorf("committed offset %d not acquired (got %s)", o, acquiredString(got))
		}
	}
	for _, o := range []int64{4, 5, 6} {
		if acquired[o] {
			t.Errorf("aborted offset %d acquired (got %s)", o, acquiredString(got))
		}
	}
}

// TestShareSessionEndsWithConnection: records a member acquired come back
// at once when its connection drops, not after the lock duration (30 s).
func TestShareSessionEndsWithConnection(t *testing.T) {
	srv := startServer(t, t.TempDir(), freePort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := newClient(t, srv.addr)
	const topic = "dropped"
	createShareTopic(ctx, t, cl, topic)
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	setGroupConfigs(ctx, t, cl, "d", map[string]string{"share.auto.offset.reset": "earliest"})
	const a, b = "member-a-0000000000000", "member-b-0000000000000"
	gone, err := kgo.NewClient(kgo.SeedBrokers(srv.addr))
	if err != nil {
		t.Fatal(err)
	}
	wa := &shareWire{t: t, cl: gone, group: "d"}
	wa.member(ctx, a, topic)
	if _, _, _, got := wa.fetch(ctx, a, 0, 5000); acquiredString(got) != "[0-2 x1]" {
		t.Fatalf("a acquired %s, want [0-2 x1]", acquiredString(got))
	}
	gone.Close() // no final ShareFetch: the connection just ends

	wb := &shareWire{t: t, cl: cl, group: "d", topic: wa.topic}
	wb.member(ctx, b, topic)
	start := time.Now()
	_, _, _, got := wb.fetch(ctx, b, 0, 10000)
	if len(got) == 0 {
		_, _, _, got = wb.fetch(ctx, b, 1, 10000)
	}
	if acquiredString(got) != "[0-2 x1]" || time.Since(start) > 15*time.Second {
		t.Fatalf("b acquired %s after %v, want a's released records [0-2 x1] before a's lock (30 s) expires", acquiredString(got), time.Since(start))
	}
}
