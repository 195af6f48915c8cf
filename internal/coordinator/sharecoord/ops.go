package sharecoord

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/share"
	"github.com/sluice-io/sluice/internal/kafka"
)

// emptyRequest is Kafka's service check: a request without a group id, or
// without topics, or with a topic without partitions, gets an empty
// answer.
func emptyRequest(groupID string, topics int, partitions func(i int) int) bool {
	if groupID == "" || topics == 0 {
		return true
	}
	for i := range topics {
		if partitions(i) == 0 {
			return true
		}
	}
	return false
}

// InitializeState serves an InitializeShareGroupState.
func (c *ShareCoordinator) InitializeState(ctx context.Context, req *kmsg.InitializeShareGroupStateRequest) *kmsg.InitializeShareGroupStateResponse {
	resp := kmsg.NewPtrInitializeShareGroupStateResponse()
	resp.SetVersion(req.Version)
	if !c.closed.Load() && emptyRequest(req.GroupID, len(req.Topics), func(i int) int { return len(req.Topics[i].Partitions) }) {
		return resp
	}
	var reqs []share.InitializeRequest
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			reqs = append(reqs, share.InitializeRequest{Key: share.Key{GroupID: req.GroupID, TopicID: kafka.UUID(t.TopicID), Partition: p.Partition},
				StateEpoch: p.StateEpoch, StartOffset: p.StartOffset})
		}
	}
	results := c.results(ctx, keysOf(reqs, func(r share.InitializeRequest) share.Key { return r.Key }),
		func(now time.Time, m *share.Manager, i int, reply func(share.Result)) {
			m.Initialize(now, reqs[i], reply)
		})
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, results[i].ErrorCode, results[i].ErrorMessage
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// WriteState serves a WriteShareGroupState (v0-1).
func (c *ShareCoordinator) WriteState(ctx context.Context, req *kmsg.WriteShareGroupStateRequest) *kmsg.WriteShareGroupStateResponse {
	resp := kmsg.NewPtrWriteShareGroupStateResponse()
	resp.SetVersion(req.Version)
	if emptyRequest(req.GroupID, len(req.Topics), func(i int) int { return len(req.Topics[i].Partitions) }) {
		return resp
	}
	var reqs []share.WriteRequest
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			w := share.WriteRequest{Key: share.Key{GroupID: req.GroupID, TopicID: kafka.UUID(t.TopicID), Partition: p.Partition},
				StateEpoch: p.StateEpoch, LeaderEpoch: p.LeaderEpoch, StartOffset: p.StartOffset, DeliveryCompleteCount: p.DeliveryCompleteCount}
			if req.Version < 1 {
				w.DeliveryCompleteCount = -1 // not in v0
			}
			for _, b := range p.StateBatches {
				w.StateBatches = append(w.StateBatches, share.StateBatch{FirstOffset: b.FirstOffset, LastOffset: b.LastOffset,
					DeliveryState: b.DeliveryState, DeliveryCount: b.DeliveryCount})
			}
			reqs = append(reqs, w)
		}
	}
	results := c.results(ctx, keysOf(reqs, func(r share.WriteRequest) share.Key { return r.Key }),
		func(now time.Time, m *share.Manager, i int, reply func(share.Result)) { m.Write(now, reqs[i], reply) })
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, results[i].ErrorCode, results[i].ErrorMessage
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// DeleteState serves a DeleteShareGroupState.
func (c *ShareCoordinator) DeleteState(ctx context.Context, req *kmsg.DeleteShareGroupStateRequest) *kmsg.DeleteShareGroupStateResponse {
	resp := kmsg.NewPtrDeleteShareGroupStateResponse()
	resp.SetVersion(req.Version)
	if !c.closed.Load() && emptyRequest(req.GroupID, len(req.Topics), func(i int) int { return len(req.Topics[i].Partitions) }) {
		return resp
	}
	var keys []share.Key
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			keys = append(keys, share.Key{GroupID: req.GroupID, TopicID: kafka.UUID(t.TopicID), Partition: p.Partition})
		}
	}
	results := c.results(ctx, keys, func(_ time.Time, m *share.Manager, i int, reply func(share.Result)) { m.Delete(keys[i], reply) })
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, results[i].ErrorCode, results[i].ErrorMessage
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// results runs a Result operation for every key (COORDINATOR_NOT_AVAILABLE
// for all once closed).
func (c *ShareCoordinator) results(ctx context.Context, keys []share.Key, op func(time.Time, *share.Manager, int, func(share.Result))) []share.Result {
	if c.closed.Load() {
		out := make([]share.Result, len(keys))
		for i := range out {
			out[i] = closedResult()
		}
		return out
	}
	return each(ctx, c, keys, op, errResult)
}

func keysOf[T any](reqs []T, key func(T) share.Key) []share.Key {
	keys := make([]share.Key, len(reqs))
	for i, r := range reqs {
		keys[i] = key(r)
	}
	return keys
}
