package sharecoord

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/share"
	"github.com/sluice-io/sluice/internal/kafka"
)

// readKeys lists a read's share partitions in request order.
func readKeys(group string, topics []kmsg.ReadShareGroupStateRequestTopic) []share.ReadRequest {
	var out []share.ReadRequest
	for _, t := range topics {
		for _, p := range t.Partitions {
			out = append(out, share.ReadRequest{Key: share.Key{GroupID: group, TopicID: kafka.UUID(t.TopicID), Partition: p.Partition},
				LeaderEpoch: p.LeaderEpoch})
		}
	}
	return out
}

// ReadState serves a ReadShareGroupState. A partition read with a new
// leader epoch is answered once that epoch is durable.
func (c *ShareCoordinator) ReadState(ctx context.Context, req *kmsg.ReadShareGroupStateRequest) *kmsg.ReadShareGroupStateResponse {
	resp := kmsg.NewPtrReadShareGroupStateResponse()
	resp.SetVersion(req.Version)
	if !c.closed.Load() && emptyRequest(req.GroupID, len(req.Topics), func(i int) int { return len(req.Topics[i].Partitions) }) {
		return resp
	}
	reqs := readKeys(req.GroupID, req.Topics)
	fail := func(code int16) share.ReadResult { return share.ReadResult{Result: errResult(code)} }
	var results []share.ReadResult
	if c.closed.Load() {
		results = make([]share.ReadResult, len(reqs))
		for i := range results {
			results[i] = share.ReadResult{Result: closedResult()}
		}
	} else {
		results = each(ctx, c, keysOf(reqs, func(r share.ReadRequest) share.Key { return r.Key }),
			func(now time.Time, m *share.Manager, i int, reply func(share.ReadResult)) {
				m.Read(now, reqs[i], reply)
			}, fail)
	}
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			r := results[i]
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, r.ErrorCode, r.ErrorMessage
			rp.StateEpoch, rp.StartOffset = r.StateEpoch, r.StartOffset
			if r.ErrorCode != 0 {
				rp.StateEpoch, rp.StartOffset = 0, 0
			}
			for _, b := range r.StateBatches {
				sb := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
				sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount
				rp.StateBatches = append(rp.StateBatches, sb)
			}
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// ReadStateSummary serves a ReadShareGroupStateSummary (v0-1; v1 adds the
// delivery-complete count).
func (c *ShareCoordinator) ReadStateSummary(ctx context.Context, req *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse {
	resp := kmsg.NewPtrReadShareGroupStateSummaryResponse()
	resp.SetVersion(req.Version)
	if !c.closed.Load() && emptyRequest(req.GroupID, len(req.Topics), func(i int) int { return len(req.Topics[i].Partitions) }) {
		return resp
	}
	var reqs []share.ReadRequest
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			reqs = append(reqs, share.ReadRequest{Key: share.Key{GroupID: req.GroupID, TopicID: kafka.UUID(t.TopicID), Partition: p.Partition},
				LeaderEpoch: p.LeaderEpoch})
		}
	}
	fail := func(code int16) share.SummaryResult { return share.SummaryResult{Result: errResult(code)} }
	var results []share.SummaryResult
	if c.closed.Load() {
		results = make([]share.SummaryResult, len(reqs))
		for i := range results {
			results[i] = share.SummaryResult{Result: closedResult()}
		}
	} else {
		results = each(ctx, c, keysOf(reqs, func(r share.ReadRequest) share.Key { return r.Key }),
			func(_ time.Time, m *share.Manager, i int, reply func(share.SummaryResult)) {
				reply(m.ReadSummary(reqs[i]))
			}, fail)
	}
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			r := results[i]
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, r.ErrorCode, r.ErrorMessage
			if r.ErrorCode == 0 {
				rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset, rp.DeliveryCompleteCount = r.StateEpoch, r.LeaderEpoch, r.StartOffset, r.DeliveryCompleteCount
			}
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func closedResult() share.Result {
	msg := unavailable
	return share.Result{ErrorCode: kerr.CoordinatorNotAvailable.Code, ErrorMessage: &msg}
}
