package api

// OffsetCommit (key 8), versions 2-10: the pinned Kafka release's range
// (KIP-896 removed v0-1).
//
// Partitions the metadata does not know get UNKNOWN_TOPIC_OR_PARTITION (v10
// names topics by id: UNKNOWN_TOPIC_ID); the others go to the coordinator,
// which answers once the offsets are durable. v2-4's retention_time_ms,
// when not -1, sets the offsets' own expiry, as Kafka does. A commit with a
// generation to a group that does not exist gets ILLEGAL_GENERATION before
// v9 and GROUP_ID_NOT_FOUND from v9 (KIP-848), as in Kafka.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
)

func newOffsetCommitHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 8, MinVersion: 2, MaxVersion: 10,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.OffsetCommitRequest)
			if !req.authorize(opRead, resGroup, body.Group) {
				return Reply(offsetCommitError(body, kerr.GroupAuthorizationFailed.Code))
			}
			return Reply(offsetCommit(ctx, gd, body, req.topicCheck(opRead)))
		},
	}
}

// offsetCommitError is Kafka's OffsetCommitRequest.getErrorResponse: the
// code on every partition.
func offsetCommitError(req *kmsg.OffsetCommitRequest, code int16) *kmsg.OffsetCommitResponse {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.SetVersion(req.Version)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// offsetCommit commits req's offsets; readable is Kafka's READ check on
// each topic (TOPIC_AUTHORIZATION_FAILED, after an unknown topic id).
func offsetCommit(ctx context.Context, gd *GroupPlaneDeps, req *kmsg.OffsetCommitRequest, readable func(string) bool) *kmsg.OffsetCommitResponse {
	resp := kmsg.NewPtrOffsetCommitResponse()
	resp.SetVersion(req.Version)
	im := gd.image()
	cr := group.CommitRequest{
		GroupID: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID, GenerationID: req.Generation,
		GroupNotFoundCode: kerr.IllegalGeneration.Code, Version: req.Version,
	}
	if req.Version >= 9 {
		cr.GroupNotFoundCode = kerr.GroupIDNotFound.Code
	}
	if req.Version <= 4 && req.RetentionTimeMillis > 0 {
		cr.Retention = time.Duration(req.RetentionTimeMillis) * time.Millisecond
	}
	// slots[i][j] is the index of topic i partition j in cr.Partitions, or
	// -1 when the partition was refused here.
	slots := make([][]int, len(req.Topics))
	for i, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		name, unknownCode := t.Topic, kerr.UnknownTopicOrPartition.Code
		if req.Version >= 10 {
			unknownCode = kerr.UnknownTopicID.Code
			if topic, ok := im.TopicByID(kafka.UUID(t.TopicID)); ok {
				name = topic.Name
			} else {
				name = ""
			}
		}
		slots[i] = make([]int, len(t.Partitions))
		for j, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
			if name != "" && !readable(name) {
				slots[i][j] = -1
				rt.Partitions[j].ErrorCode = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if name == "" || !partitionExists(im, name, p.Partition) {
				slots[i][j] = -1
				rt.Partitions[j].ErrorCode = unknownCode
				continue
			}
			slots[i][j] = len(cr.Partitions)
			cr.Partitions = append(cr.Partitions, group.CommitPartition{
				TP: kafka.TopicPartition{Topic: name, Partition: p.Partition}, Offset: p.Offset,
				LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata,
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(cr.Partitions) == 0 {
		return resp
	}
	res := gd.Coordinator.CommitOffsets(ctx, cr)
	for i := range resp.Topics {
		for j, k := range slots[i] {
			if k >= 0 {
				resp.Topics[i].Partitions[j].ErrorCode = res.Errors[k]
			}
		}
	}
	return resp
}
