package api

// AlterShareGroupOffsets (key 91), version 0: sets the start offsets of an
// empty share group's partitions (created when unknown, as Kafka), through
// the share coordinator's InitializeShareGroupState.
//
// Checks as Kafka 4.4's KafkaApis: READ on the group (else
// GROUP_AUTHORIZATION_FAILED with Kafka's message, no topics); per topic,
// READ on the topic (else TOPIC_AUTHORIZATION_FAILED on its partitions)
// and a topic the image has (else UNKNOWN_TOPIC_OR_PARTITION); the
// others go to the coordinator, whose group-level error is the answer's
// only content.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/metadata"
)

// newAlterShareGroupOffsetsHandler serves key 91; image names the topic
// ids of refused topics, as Kafka's answer carries them.
func newAlterShareGroupOffsetsHandler(sc ShareOffsetsCoordinator, image func() *metadata.Image) Handler {
	return Handler{
		Key: 91, MinVersion: 0, MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AlterShareGroupOffsetsRequest)
			resp := kmsg.NewPtrAlterShareGroupOffsetsResponse()
			resp.SetVersion(body.Version)
			resp.Topics = []kmsg.AlterShareGroupOffsetsResponseTopic{}
			fail := func(code int16, msg *string) Response {
				resp.ErrorCode, resp.ErrorMessage, resp.Topics = code, msg, []kmsg.AlterShareGroupOffsetsResponseTopic{}
				return Reply(resp)
			}
			if !req.authorize(opRead, resGroup, body.GroupID) {
				return fail(kerr.GroupAuthorizationFailed.Code, codeMessage(kerr.GroupAuthorizationFailed.Code))
			}
			b := alterShareBuilder{resp: resp, image: image}
			var allowed []group.ShareOffsetsAlterTopic
			for _, t := range body.Topics {
				code := int16(0)
				switch {
				case !req.authorize(opRead, resTopic, t.Topic):
					code = kerr.TopicAuthorizationFailed.Code
				case !topicKnown(image, t.Topic):
					code = kerr.UnknownTopicOrPartition.Code
				}
				if code != 0 {
					for _, p := range t.Partitions {
						b.add(t.Topic, p.Partition, code, codeMessage(code))
					}
					continue
				}
				at := group.ShareOffsetsAlterTopic{TopicName: t.Topic}
				for _, p := range t.Partitions {
					at.Partitions = append(at.Partitions, group.ShareOffsetsAlterPartition{Partition: p.Partition, StartOffset: p.StartOffset})
				}
				allowed = append(allowed, at)
			}
			res := sc.AlterShareGroupOffsets(ctx, body.GroupID, allowed)
			if res.ErrorCode != 0 {
				msg := res.ErrorMessage
				if msg == nil {
					msg = codeMessage(res.ErrorCode)
				}
				return fail(res.ErrorCode, msg)
			}
			for _, t := range res.Topics {
				for _, p := range t.Partitions {
					b.add(t.TopicName, p.Partition, p.ErrorCode, p.ErrorMessage)
				}
			}
			return Reply(resp)
		},
	}
}

func topicKnown(image func() *metadata.Image, name string) bool {
	if image == nil {
		return false
	}
	_, ok := image().Topic(name)
	return ok
}

// alterShareBuilder is Kafka's AlterShareGroupOffsetsResponse.Builder:
// partitions gather under their topic, in first-seen order, with the
// topic's id from the image.
type alterShareBuilder struct {
	resp  *kmsg.AlterShareGroupOffsetsResponse
	image func() *metadata.Image
}

func (b *alterShareBuilder) add(topic string, partition int32, code int16, msg *string) {
	i := -1
	for j := range b.resp.Topics {
		if b.resp.Topics[j].Topic == topic {
			i = j
			break
		}
	}
	if i < 0 {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic, rt.TopicID = topic, topicIDOf(b.image, topic)
		rt.Partitions = []kmsg.AlterShareGroupOffsetsResponseTopicPartition{}
		b.resp.Topics = append(b.resp.Topics, rt)
		i = len(b.resp.Topics) - 1
	}
	rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
	rp.Partition, rp.ErrorCode, rp.ErrorMessage = partition, code, msg
	b.resp.Topics[i].Partitions = append(b.resp.Topics[i].Partitions, rp)
}
