package api

// OffsetDelete (key 47), version 0: the pinned Kafka release's range.
//
// Partitions the metadata does not know get UNKNOWN_TOPIC_OR_PARTITION; a
// consumer group with members keeps the offsets of topics it subscribes to
// (GROUP_SUBSCRIBED_TO_TOPIC), as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

func newOffsetDeleteHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 47, MinVersion: 0, MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.OffsetDeleteRequest)
			// Kafka: DELETE on the group (else the response's error), READ
			// on each topic (else TOPIC_AUTHORIZATION_FAILED on its partitions).
			if !req.authorize(opDelete, resGroup, body.Group) {
				resp := kmsg.NewPtrOffsetDeleteResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				return Reply(resp)
			}
			return Reply(offsetDelete(ctx, gd, body, req.topicCheck(opRead)))
		},
	}
}

func offsetDelete(ctx context.Context, gd *GroupPlaneDeps, req *kmsg.OffsetDeleteRequest, readable func(string) bool) *kmsg.OffsetDeleteResponse {
	resp := kmsg.NewPtrOffsetDeleteResponse()
	resp.SetVersion(req.Version)
	im := gd.image()
	var parts []kafka.TopicPartition
	var slots [][]int
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		idx := make([]int, len(t.Partitions))
		for j, p := range t.Partitions {
			rp := kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if !readable(t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				idx[j] = -1
			} else if !partitionExists(im, t.Topic, p.Partition) {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				idx[j] = -1
			} else {
				idx[j] = len(parts)
				parts = append(parts, kafka.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		slots = append(slots, idx)
		resp.Topics = append(resp.Topics, rt)
	}
	code, codes := gd.Coordinator.DeleteOffsets(ctx, req.Group, parts)
	if code != 0 {
		resp.ErrorCode = code
		resp.Topics = nil
		return resp
	}
	for i := range resp.Topics {
		for j, k := range slots[i] {
			if k >= 0 && k < len(codes) {
				resp.Topics[i].Partitions[j].ErrorCode = codes[k]
			}
		}
	}
	return resp
}
