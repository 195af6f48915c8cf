package api

// DescribeShareGroupOffsets (key 90), versions 0-1: each share
// partition's start offset (SPSO) and leader epoch, and from version 1 its
// lag (KIP-1226). A group without topics (null) describes every
// initialized partition of the group.
//
// Checks as Kafka 4.4's KafkaApis, per group: DESCRIBE on the group (else
// GROUP_AUTHORIZATION_FAILED, no message); for listed topics, a topic
// the principal may not DESCRIBE answers TOPIC_AUTHORIZATION_FAILED on
// each partition (start offset -1, after the others); when all are asked
// for, such topics are left out. The coordinator's own failure is the
// group's error with Kafka's message for it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/metadata"
)

// ShareOffsetsCoordinator is what the share-group offsets handlers need of
// the group coordinator (*groupcoord.GroupCoordinator).
type ShareOffsetsCoordinator interface {
	// DescribeShareGroupOffsets describes a group's partitions; nil
	// topics asks for every initialized one.
	DescribeShareGroupOffsets(ctx context.Context, groupID string, topics []group.ShareOffsetsTopic) group.ShareGroupOffsets
	AlterShareGroupOffsets(ctx context.Context, groupID string, topics []group.ShareOffsetsAlterTopic) group.AlterShareOffsetsResult
	DeleteShareGroupOffsets(ctx context.Context, groupID string, topics []string) group.ShareOffsetsDeleteResult
}

func newDescribeShareGroupOffsetsHandler(sc ShareOffsetsCoordinator) Handler {
	return Handler{
		Key: 90, MinVersion: 0, MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeShareGroupOffsetsRequest)
			resp := kmsg.NewPtrDescribeShareGroupOffsetsResponse()
			resp.SetVersion(body.Version)
			resp.Groups = make([]kmsg.DescribeShareGroupOffsetsResponseGroup, 0, len(body.Groups))
			for _, g := range body.Groups {
				resp.Groups = append(resp.Groups, describeShareOffsetsGroup(ctx, req, sc, g))
			}
			return Reply(resp)
		},
	}
}

func describeShareOffsetsGroup(ctx context.Context, req *Request, sc ShareOffsetsCoordinator, g kmsg.DescribeShareGroupOffsetsRequestGroup) kmsg.DescribeShareGroupOffsetsResponseGroup {
	rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
	rg.GroupID = g.GroupID
	rg.Topics = []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{}
	if !req.authorize(opDescribe, resGroup, g.GroupID) {
		rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return rg
	}
	if g.Topics == nil {
		d := sc.DescribeShareGroupOffsets(ctx, g.GroupID, nil)
		fillShareOffsets(&rg, d, func(topic string) bool { return req.authorize(opDescribe, resTopic, topic) })
		return rg
	}
	if len(g.Topics) == 0 {
		return rg
	}
	allowed := []group.ShareOffsetsTopic{} // not nil: nil asks for all
	var denied []kmsg.DescribeShareGroupOffsetsResponseGroupTopic
	for _, t := range g.Topics {
		if req.authorize(opDescribe, resTopic, t.Topic) {
			allowed = append(allowed, group.ShareOffsetsTopic{TopicName: t.Topic, Partitions: t.Partitions})
			continue
		}
		denied = append(denied, deniedShareOffsetsTopic(t))
	}
	// Kafka asks the coordinator even when every topic is refused.
	d := sc.DescribeShareGroupOffsets(ctx, g.GroupID, allowed)
	fillShareOffsets(&rg, d, nil)
	if rg.ErrorCode == 0 {
		rg.Topics = append(rg.Topics, denied...)
	}
	return rg
}

// deniedShareOffsetsTopic answers a topic the principal may not describe.
func deniedShareOffsetsTopic(t kmsg.DescribeShareGroupOffsetsRequestGroupTopic) kmsg.DescribeShareGroupOffsetsResponseGroupTopic {
	rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
	rt.Topic = t.Topic
	rt.Partitions = []kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition{}
	for _, p := range t.Partitions {
		rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
		rp.Partition, rp.StartOffset, rp.Lag = p, -1, -1
		rp.ErrorCode, rp.ErrorMessage = kerr.TopicAuthorizationFailed.Code, codeMessage(kerr.TopicAuthorizationFailed.Code)
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// fillShareOffsets copies the coordinator's answer; keep, when set, drops
// the topics it refuses.
func fillShareOffsets(rg *kmsg.DescribeShareGroupOffsetsResponseGroup, d group.ShareGroupOffsets, keep func(string) bool) {
	if d.ErrorCode != 0 {
		rg.ErrorCode, rg.ErrorMessage = d.ErrorCode, d.ErrorMessage
		if rg.ErrorMessage == nil {
			rg.ErrorMessage = codeMessage(d.ErrorCode)
		}
		return
	}
	for _, t := range d.Topics {
		if keep != nil && !keep(t.TopicName) {
			continue
		}
		rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
		rt.Topic, rt.TopicID = t.TopicName, t.TopicID
		rt.Partitions = make([]kmsg.DescribeShareGroupOffsetsResponseGroupTopicPartition, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
			rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p.Partition, p.StartOffset, p.LeaderEpoch, p.Lag
			rp.ErrorCode, rp.ErrorMessage = p.ErrorCode, p.ErrorMessage
			rt.Partitions = append(rt.Partitions, rp)
		}
		rg.Topics = append(rg.Topics, rt)
	}
}

// topicIDOf is a topic's id in the image, or the zero id (Kafka's
// topicNamesToIds lookup).
func topicIDOf(image func() *metadata.Image, name string) [16]byte {
	if image == nil {
		return [16]byte{}
	}
	if t, ok := image().Topic(name); ok {
		return t.ID
	}
	return [16]byte{}
}
