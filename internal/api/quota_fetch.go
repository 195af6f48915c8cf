package api

import (
	"context"
	"math"

	"github.com/sluice-io/sluice/internal/fetchwire"
	"github.com/sluice-io/sluice/internal/replication"
)

// capFetchBytes is KafkaApis' fetch size bound for consumers: max_bytes
// no more than the fetch quota allows over its window
// (getMaxValueInQuotaWindow). Followers are not bound.
func (qr *quotaRequest) capFetchBytes(maxBytes int32, follower bool) int32 {
	if qr == nil || follower {
		return maxBytes
	}
	limit := qr.q.Fetch.MaxValueInQuotaWindow(qr.user, qr.clientID)
	if limit >= float64(maxBytes) || math.IsInf(limit, 1) {
		return maxBytes
	}
	return int32(max(limit, 0))
}

// fetchThrottle is KafkaApis.handleFetchRequest's quota step for a
// consumer: the request time on the request quota, the response's size on
// the fetch quota; when either calls for a throttle the size is taken back
// (the answer will be empty) and the throttle time returned. A follower's
// fetch is exempt, as Kafka's replication is.
func (qr *quotaRequest) fetchThrottle(size int64, follower bool) int64 {
	if qr == nil {
		return 0
	}
	qr.handled = true
	if follower {
		return 0
	}
	requestMs := qr.recordRequestTime()
	bandwidth := qr.q.Fetch.RecordAndGetThrottleTimeMs(qr.user, qr.clientID, float64(size))
	ms := qr.throttle(qr.q.Fetch, bandwidth, requestMs)
	if ms > 0 {
		qr.q.Fetch.Unrecord(qr.user, qr.clientID, float64(size))
	}
	qr.throttleMs = ms
	return ms
}

// fetchResponseSize is the size of the answer the fetch would send with
// every partition in it (Kafka's FetchContext.getResponseSize), the bytes
// the fetch quota counts; an incremental session's answer leaves out
// partitions with nothing new, which carry no records either.
func fetchResponseSize(version int16, fc *fetchContext, answers []fetchwire.Partition) int64 {
	resp := &fetchwire.Response{}
	for i, sp := range fc.parts {
		n := len(resp.Topics)
		if n == 0 || resp.Topics[n-1].ID != sp.key.ID || resp.Topics[n-1].Name != sp.key.Name {
			resp.Topics = append(resp.Topics, fetchwire.Topic{Name: sp.key.Name, ID: sp.key.ID})
			n++
		}
		resp.Topics[n-1].Partitions = append(resp.Topics[n-1].Partitions, answers[i])
	}
	enc, err := fetchwire.Encode(resp, version)
	if err != nil {
		return 0
	}
	return enc.Len()
}

// throttledFetch is FetchContext.getThrottledResponse: no partitions, the
// throttle time, the incremental session's id (its epoch already moved
// on) or none (a full fetch opens no session).
func throttledFetch(fc *fetchContext, ms int64) *fetchwire.Response {
	resp := &fetchwire.Response{ThrottleMillis: int32(min(ms, math.MaxInt32))}
	if fc.incremental != nil {
		resp.SessionID = fc.incremental.id
	}
	return resp
}

// parkedFetches times a consumer's long polls as parked, not request time.
type parkedFetches struct {
	DataPlane
}

func (p parkedFetches) Fetch(ctx context.Context, params replication.FetchParams, parts []replication.FetchPartition) []replication.FetchPartitionResult {
	qr := quotaOf(ctx)
	if qr == nil || params.MaxWait <= 0 {
		return p.DataPlane.Fetch(ctx, params, parts)
	}
	start := qr.clk.Now()
	defer func() { qr.parked += qr.clk.Now().Sub(start) }()
	return p.DataPlane.Fetch(ctx, params, parts)
}
