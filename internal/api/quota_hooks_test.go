package api

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/quota"
)

// quotaImage is an image with the given quotas (entity parts as in
// metadata.QuotaEntity) and topics of the given partition counts.
func quotaImage(t *testing.T, quotas map[metadata.QuotaEntity]map[string]float64, topics map[string]int) *metadata.Image {
	t.Helper()
	d := metadata.NewDelta(metadata.EmptyImage())
	off := int64(0)
	replay := func(r metadata.Record) {
		if err := d.Replay(off, 1, r); err != nil {
			t.Fatal(err)
		}
		off++
	}
	for e, kv := range quotas {
		for k, v := range kv {
			replay(&metadata.ClientQuotaRecord{Entity: e, Key: k, Value: v})
		}
	}
	for name, n := range topics {
		id := kafka.UUID{byte(len(name)), name[0]}
		replay(&metadata.TopicRecord{Name: name, TopicID: id})
		for p := 0; p < n; p++ {
			replay(&metadata.PartitionRecord{TopicID: id, Partition: int32(p), Replicas: []int32{1}, ISR: []int32{1}, Leader: 1})
		}
	}
	return d.Apply()
}

type staticImage struct{ img *metadata.Image }

func (s staticImage) Image() *metadata.Image { return s.img }

func quotaConn() *ConnState {
	return &ConnState{Listener: "PLAINTEXT", Principal: auth.Anonymous}
}

func quotaHeader(key, version int16, clientID string) protocol.RequestHeader {
	return protocol.RequestHeader{APIKey: key, APIVersion: version, ClientID: &clientID, Flexible: version >= 9}
}

// TestProduceRequestSize checks the computed size against the encoded
// request (header and body) at a non-flexible, a flexible and a topic-id
// version.
func TestProduceRequestSize(t *testing.T) {
	for _, v := range []int16{3, 8, 9, 12, 13} {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = v, -1, 1000
		txn := "txn-1"
		req.TransactionID = &txn
		for _, topic := range []string{"orders", "payments-eu"} {
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			for p := int32(0); p < 3; p++ {
				rp := kmsg.NewProduceRequestTopicPartition()
				rp.Partition, rp.Records = p, make([]byte, 100+int(p)*300)
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		h := quotaHeader(0, v, "producer-1")
		body := req.AppendTo(nil)
		header := 2 + 2 + 4 + 2 + len(*h.ClientID)
		if h.Flexible {
			header++
		}
		if got, want := produceRequestSize(h, req), header+len(body); got != want {
			t.Errorf("v%d: computed %d, encoded %d", v, got, want)
		}
	}
}

func TestProduceThrottled(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := quotaImage(t, map[metadata.QuotaEntity]map[string]float64{
		{ClientID: metadata.QuotaName("slow")}: {metadata.QuotaProducerByteRate: 1000},
	}, nil)
	q := quota.New(quota.Options{Clock: clk, Images: func() *metadata.Image { return img }})
	produce := Handler{Key: 0, MaxVersion: 13, Handle: func(_ context.Context, req *Request) Response {
		body := req.Body.(*kmsg.ProduceRequest)
		if body.Acks == 0 {
			return NoResponse()
		}
		return Reply(body.ResponseKind())
	}}
	h := withQuotas(q, []Handler{produce})[0]
	send := func(client string, acks int16, n int) Response {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks = 9, acks
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = make([]byte, n)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return h.Handle(context.Background(), &Request{Header: quotaHeader(0, 9, client), Body: req, Conn: quotaConn()})
	}
	// 10 windows' worth passes; the next request is throttled.
	if resp := send("slow", 1, 9000); resp.ThrottleMs() != 0 {
		t.Fatalf("first request throttled %d ms", resp.ThrottleMs())
	}
	resp := send("slow", 1, 9000)
	body := resp.Body().(*kmsg.ProduceResponse)
	if resp.ThrottleMs() <= 0 || int64(body.ThrottleMillis) != resp.ThrottleMs() {
		t.Fatalf("over the quota: mute %d ms, throttle_time_ms %d", resp.ThrottleMs(), body.ThrottleMillis)
	}
	// acks=0 has no answer, but the connection is muted all the same.
	if resp := send("slow", 0, 9000); !resp.IsNoResponse() || resp.ThrottleMs() <= 0 {
		t.Fatalf("acks=0: no response %v, mute %d", resp.IsNoResponse(), resp.ThrottleMs())
	}
	if resp := send("fast", 1, 1<<20); resp.ThrottleMs() != 0 {
		t.Fatalf("a client without a quota throttled %d ms", resp.ThrottleMs())
	}
}

// TestRequestQuota: handler time counts against request_percentage, the
// throttle is bounded by one window, exempt keys are not throttled.
func TestRequestQuota(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := quotaImage(t, map[metadata.QuotaEntity]map[string]float64{
		{User: metadata.QuotaDefault()}: {metadata.QuotaRequestPercentage: 1},
	}, nil)
	q := quota.New(quota.Options{Clock: clk, Images: func() *metadata.Image { return img }})
	slow := func(key int16) Handler {
		return Handler{Key: key, MaxVersion: 10, Handle: func(_ context.Context, req *Request) Response {
			clk.Advance(500 * time.Millisecond) // the handler's work
			return Reply(kmsg.NewPtrListGroupsResponse())
		}}
	}
	hs := withQuotas(q, []Handler{slow(16), slow(63)})
	resp := hs[0].Handle(context.Background(), &Request{Header: quotaHeader(16, 4, "c"), Body: kmsg.NewPtrListGroupsRequest(), Conn: quotaConn()})
	if resp.ThrottleMs() != 1000 || resp.Body().(*kmsg.ListGroupsResponse).ThrottleMillis != 1000 {
		t.Fatalf("50%% of a thread over a 1%% quota: mute %d ms, want the 1000 ms bound", resp.ThrottleMs())
	}
	resp = hs[1].Handle(context.Background(), &Request{Header: quotaHeader(63, 4, "c"), Body: kmsg.NewPtrListGroupsRequest(), Conn: quotaConn()})
	if resp.ThrottleMs() != 0 {
		t.Fatalf("BrokerHeartbeat is exempt, throttled %d ms", resp.ThrottleMs())
	}
}

// fakeTopicAdmin answers CreateTopics, refusing topics named "exists".
type fakeTopicAdmin struct {
	AdminController
	created []string
}

func (f *fakeTopicAdmin) CreateTopics(_ context.Context, req *kmsg.CreateTopicsRequest) (*kmsg.CreateTopicsResponse, error) {
	resp := kmsg.NewPtrCreateTopicsResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		if t.Topic == "exists" {
			rt.ErrorCode = kerr.TopicAlreadyExists.Code
		} else {
			f.created = append(f.created, t.Topic)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func TestControllerMutationQuota(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := quotaImage(t, map[metadata.QuotaEntity]map[string]float64{
		{User: metadata.QuotaName("ANONYMOUS"), ClientID: metadata.QuotaDefault()}: {metadata.QuotaControllerMutationRate: 1},
	}, map[string]int{"exists": 1})
	q := quota.New(quota.Options{ControllerConfig: quota.Config{Samples: 10, WindowMs: 1000}, Clock: clk, Images: func() *metadata.Image { return img }})
	fake := &fakeTopicAdmin{}
	d := withQuotaDeps(BrokerDeps{Admin: fake, Metadata: staticImage{img}, Quotas: q})
	h := withQuotas(q, []Handler{newCreateTopicsHandler(config.Defaults(), d.Admin)})[0]
	create := func(version int16, topics map[string]int32, order ...string) (*kmsg.CreateTopicsResponse, Response) {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = version
		for _, name := range order {
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, topics[name], 1
			req.Topics = append(req.Topics, rt)
		}
		resp := h.Handle(context.Background(), &Request{Header: quotaHeader(19, version, "admin"), Body: req, Conn: quotaConn()})
		return resp.Body().(*kmsg.CreateTopicsResponse), resp
	}
	// The burst is 10 partitions: "a" takes 8, "exists" takes none (it
	// exists: the controller refuses it before the quota), "b" takes 8
	// (-6 left), "c" is refused by the strict quota and never sent.
	body, resp := create(6, map[string]int32{"a": 8, "exists": 8, "b": 8, "c": 1}, "a", "exists", "b", "c")
	codes := map[string]int16{}
	for _, rt := range body.Topics {
		codes[rt.Topic] = rt.ErrorCode
	}
	if codes["a"] != 0 || codes["b"] != 0 || codes["exists"] != kerr.TopicAlreadyExists.Code || codes["c"] != kerr.ThrottlingQuotaExceeded.Code {
		t.Fatalf("codes %v", codes)
	}
	if len(fake.created) != 2 || body.ThrottleMillis != 6000 || resp.ThrottleMs() != 6000 {
		t.Fatalf("created %v, throttle %d ms (mute %d), want 6000", fake.created, body.ThrottleMillis, resp.ThrottleMs())
	}
	// v5 is permissive: created, throttled.
	body, _ = create(5, map[string]int32{"d": 1}, "d")
	if body.Topics[0].ErrorCode != 0 || body.ThrottleMillis != 7000 {
		t.Fatalf("v5: code %d throttle %d, want 0 and 7000", body.Topics[0].ErrorCode, body.ThrottleMillis)
	}
	clk.Advance(7 * time.Second)
	body, _ = create(6, map[string]int32{"e": 1}, "e")
	if body.Topics[0].ErrorCode != 0 {
		t.Fatalf("after the refill: code %d", body.Topics[0].ErrorCode)
	}
}

func (f *fakeTopicAdmin) DeleteTopics(_ context.Context, req *kmsg.DeleteTopicsRequest) (*kmsg.DeleteTopicsResponse, error) {
	resp := kmsg.NewPtrDeleteTopicsResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		f.created = append(f.created, "-"+*t.Topic)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (f *fakeTopicAdmin) CreatePartitions(_ context.Context, req *kmsg.CreatePartitionsRequest) (*kmsg.CreatePartitionsResponse, error) {
	resp := kmsg.NewPtrCreatePartitionsResponse()
	for _, t := range req.Topics {
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		f.created = append(f.created, "+"+t.Topic)
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

// TestMutationQuotaDeleteAndCreatePartitions: DeleteTopics takes each
// topic's partitions (strict from v5), CreatePartitions the partitions
// added (strict from v3); unknown topics take nothing.
func TestMutationQuotaDeleteAndCreatePartitions(t *testing.T) {
	clk := clock.NewManual(time.UnixMilli(1_700_000_000_000))
	img := quotaImage(t, map[metadata.QuotaEntity]map[string]float64{
		{ClientID: metadata.QuotaName("admin")}: {metadata.QuotaControllerMutationRate: 1},
	}, map[string]int{"big": 8, "small": 3, "grow": 2})
	q := quota.New(quota.Options{ControllerConfig: quota.Config{Samples: 5, WindowMs: 1000}, Clock: clk, Images: func() *metadata.Image { return img }})
	fake := &fakeTopicAdmin{}
	d := withQuotaDeps(BrokerDeps{Admin: fake, Metadata: staticImage{img}, Quotas: q})
	del := func(names ...string) *kmsg.DeleteTopicsResponse {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version = 6
		for _, n := range names {
			rt := kmsg.NewDeleteTopicsRequestTopic()
			rt.Topic = kmsg.StringPtr(n)
			req.Topics = append(req.Topics, rt)
		}
		resp, err := d.Admin.DeleteTopics(context.WithValue(context.Background(), quotaCtxKey{}, &quotaRequest{q: q, clk: clk, clientID: "admin", start: clk.Now()}), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Burst 5: "missing" takes nothing, "big" 8 (-3 left), "small" refused.
	resp := del("missing", "big", "small")
	codes := map[string]int16{}
	for _, rt := range resp.Topics {
		codes[*rt.Topic] = rt.ErrorCode
	}
	if codes["big"] != 0 || codes["small"] != kerr.ThrottlingQuotaExceeded.Code || len(fake.created) != 2 {
		t.Fatalf("delete: codes %v, sent %v", codes, fake.created)
	}
	clk.Advance(4 * time.Second) // back to +1
	qr := &quotaRequest{q: q, clk: clk, clientID: "admin", start: clk.Now()}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Version = 3
	for _, name := range []string{"grow", "small"} {
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = name, 5
		cp.Topics = append(cp.Topics, rt)
	}
	out, err := d.Admin.CreatePartitions(context.WithValue(context.Background(), quotaCtxKey{}, qr), cp)
	if err != nil {
		t.Fatal(err)
	}
	// "grow" adds 3 (1-3 = -2 left), "small" is refused with 2000 ms.
	if out.Topics[0].ErrorCode != 0 || out.Topics[1].Topic != "small" || out.Topics[1].ErrorCode != kerr.ThrottlingQuotaExceeded.Code || qr.throttleMs != 2000 {
		t.Fatalf("create partitions: %+v, throttle %d", out.Topics, qr.throttleMs)
	}
}
