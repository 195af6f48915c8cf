package api

// Client quotas on the broker listeners, as Kafka's KafkaApis applies its
// QuotaManagers: every request but the cluster's own records its handler
// time on the request quota (request_percentage); Produce records its size
// on the produce quota (producer_byte_rate) and Fetch its response size on
// the fetch quota (consumer_byte_rate, a throttled fetch answered empty,
// fetch.go); CreateTopics, DeleteTopics and CreatePartitions take their
// partitions from the controller mutation quota (quota_mutations.go). The
// response carries the largest throttle time in throttle_time_ms and the
// server mutes the connection for it (KIP-219): the answer goes out at
// once and the next request is read only once the time has passed.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/protocol"
	"github.com/sluice-io/sluice/internal/quota"
)

// quotaRequest is one request's dealings with the quotas. Handlers reach it
// through their context (quotaOf); nil means no quotas.
type quotaRequest struct {
	q        *quota.Managers
	clk      clock.Clock
	user     string
	clientID string
	start    time.Time
	// parked is time the handler waited rather than worked (a fetch's
	// long poll), left out of the request time: Kafka's handler threads
	// do not wait, a request waits in the purgatory.
	parked time.Duration
	// throttleMs is the throttle a handler set itself (fetch, controller
	// mutations); handled says the handler already recorded the request
	// quota.
	throttleMs int64
	handled    bool
}

type quotaCtxKey struct{}

func quotaOf(ctx context.Context) *quotaRequest {
	qr, _ := ctx.Value(quotaCtxKey{}).(*quotaRequest)
	return qr
}

// requestTimeNanos is the request's handler time so far.
func (qr *quotaRequest) requestTimeNanos() int64 {
	return max(0, int64(clock.Since(qr.clk, qr.start)-qr.parked))
}

// recordRequestTime records the handler time on the request quota and
// returns its throttle time.
func (qr *quotaRequest) recordRequestTime() int64 {
	return qr.q.Request.RecordAndGetThrottleTimeMs(qr.user, qr.clientID, quota.NanosToPercentage(qr.requestTimeNanos()))
}

// throttle picks the larger of a bandwidth (or mutation) throttle and the
// request throttle and counts it on the manager that called for it, as
// RequestHandlerHelper.throttle.
func (qr *quotaRequest) throttle(m *quota.Manager, ms, requestMs int64) int64 {
	switch {
	case ms <= 0 && requestMs <= 0:
		return 0
	case ms > requestMs:
		m.Throttled(qr.user, qr.clientID, ms)
		return ms
	default:
		qr.q.Request.Throttled(qr.user, qr.clientID, requestMs)
		return requestMs
	}
}

// quotaExempt are the keys Kafka answers with sendResponseExemptThrottle
// or that precede authentication: the cluster's own requests and SASL.
func quotaExempt(key int16) bool {
	switch key {
	case 17, 36, // SaslHandshake, SaslAuthenticate
		27,                 // WriteTxnMarkers
		56, 58, 62, 63, 67: // AlterPartition, Envelope, BrokerRegistration, BrokerHeartbeat, AllocateProducerIds
		return true
	}
	return false
}

// withQuotas wraps the broker handlers with the client quotas.
func withQuotas(q *quota.Managers, hs []Handler) []Handler {
	if q == nil {
		return hs
	}
	clk := q.Clock()
	out := make([]Handler, len(hs))
	for i, h := range hs {
		out[i] = h
		if quotaExempt(h.Key) {
			continue
		}
		handle := h.Handle
		out[i].Handle = func(ctx context.Context, req *Request) Response {
			qr := &quotaRequest{q: q, clk: clk, user: req.Conn.Principal.Name, clientID: req.Header.ClientIDString(), start: clk.Now()}
			resp := handle(context.WithValue(ctx, quotaCtxKey{}, qr), req)
			if resp.CloseReason() != nil {
				return resp
			}
			if req.Header.APIKey == 0 {
				return qr.finishProduce(req, resp)
			}
			return qr.finish(resp)
		}
	}
	return out
}

// BrokerHandlersWithQuotas is BrokerHandlers with d.Quotas enforced (none
// when nil).
func BrokerHandlersWithQuotas(d BrokerDeps) []Handler {
	return withQuotas(d.Quotas, BrokerHandlers(withQuotaDeps(d)))
}

// withQuotaDeps puts the controller mutation quota in front of the
// admin requests and times consumers' long polls as parked.
func withQuotaDeps(d BrokerDeps) BrokerDeps {
	if d.Quotas == nil {
		return d
	}
	if d.Admin != nil {
		d.Admin = mutationQuotaAdmin{AdminController: d.Admin, cfg: d.Config, meta: d.Metadata}
	}
	if d.Data != nil && d.Data.Partitions != nil {
		data := *d.Data
		data.Partitions = parkedFetches{data.Partitions}
		d.Data = &data
	}
	return d
}

// finish applies the request quota (unless the handler did) and sets the
// response's throttle time.
func (qr *quotaRequest) finish(resp Response) Response {
	ms := qr.throttleMs
	if !qr.handled {
		ms = qr.throttle(qr.q.ControllerMutation, qr.throttleMs, qr.recordRequestTime())
	}
	if ms <= 0 {
		return resp
	}
	if body, ok := resp.Body().(kmsg.SetThrottleResponse); ok {
		body.SetThrottle(int32(min(ms, int64(^uint32(0)>>1))))
	}
	return resp.WithThrottle(ms)
}

// finishProduce is KafkaApis.handleProduceRequest's quota step: the
// request's size on the produce quota, its time on the request quota
// (not for acks=0), the larger throttle in the answer; an acks=0 produce
// has no answer but its connection is muted all the same.
func (qr *quotaRequest) finishProduce(req *Request, resp Response) Response {
	body, ok := req.Body.(*kmsg.ProduceRequest)
	if !ok {
		return resp
	}
	bandwidth := qr.q.Produce.RecordAndGetThrottleTimeMs(qr.user, qr.clientID, float64(produceRequestSize(req.Header, body)))
	var requestMs int64
	if body.Acks != 0 {
		requestMs = qr.recordRequestTime()
	}
	ms := qr.throttle(qr.q.Produce, bandwidth, requestMs)
	if ms <= 0 {
		return resp
	}
	if out, ok := resp.Body().(*kmsg.ProduceResponse); ok {
		out.ThrottleMillis = int32(min(ms, int64(^uint32(0)>>1)))
	}
	return resp.WithThrottle(ms)
}

// produceRequestSize is the request's size on the wire (header and body,
// Kafka's request.sizeInBytes) computed from its fields, so the frame need
// not be kept: the records dominate it.
func produceRequestSize(h protocol.RequestHeader, req *kmsg.ProduceRequest) int {
	flex := req.Version >= 9
	str := func(n int) int {
		if flex {
			return uvarintLen(n+1) + n
		}
		return 2 + n
	}
	arr := func(n int) int {
		if flex {
			return uvarintLen(n + 1)
		}
		return 4
	}
	tags := 0
	if flex {
		tags = 1
	}
	size := 2 + 2 + 4 + 2 + len(h.ClientIDString()) + tags // header; the client id is never compact
	txn := 0
	if req.TransactionID != nil {
		txn = len(*req.TransactionID)
	}
	size += str(txn) + 2 + 4 + arr(len(req.Topics)) + tags
	for _, t := range req.Topics {
		if req.Version >= 13 {
			size += 16
		} else {
			size += str(len(t.Topic))
		}
		size += arr(len(t.Partitions)) + tags
		for _, p := range t.Partitions {
			size += 4 + str(len(p.Records)) + tags
			if !flex {
				size += 2 // records are int32-sized bytes, not int16
			}
		}
	}
	return size
}

func uvarintLen(n int) int {
	l := 1
	for n >= 0x80 {
		n >>= 7
		l++
	}
	return l
}
