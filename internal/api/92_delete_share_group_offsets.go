package api

// DeleteShareGroupOffsets (key 92), version 0: deletes the share state of
// whole topics of an empty share group (the share coordinator's
// DeleteShareGroupState), so that they start again from
// share.auto.offset.reset.
//
// Checks as Kafka 4.4's KafkaApis: DELETE on the group (else
// GROUP_AUTHORIZATION_FAILED with Kafka's message); per topic, READ on the
// topic (else TOPIC_AUTHORIZATION_FAILED, listed first); a group-level
// error of the coordinator is the answer's only content.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newDeleteShareGroupOffsetsHandler(sc ShareOffsetsCoordinator) Handler {
	return Handler{
		Key: 92, MinVersion: 0, MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DeleteShareGroupOffsetsRequest)
			resp := kmsg.NewPtrDeleteShareGroupOffsetsResponse()
			resp.SetVersion(body.Version)
			resp.Topics = []kmsg.DeleteShareGroupOffsetsResponseTopic{}
			fail := func(code int16, msg *string) Response {
				if msg == nil {
					msg = codeMessage(code)
				}
				resp.ErrorCode, resp.ErrorMessage, resp.Topics = code, msg, []kmsg.DeleteShareGroupOffsetsResponseTopic{}
				return Reply(resp)
			}
			if !req.authorize(opDelete, resGroup, body.GroupID) {
				return fail(kerr.GroupAuthorizationFailed.Code, nil)
			}
			allowed := []string{}
			for _, t := range body.Topics {
				if !req.authorize(opRead, resTopic, t.Topic) {
					rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
					rt.Topic, rt.ErrorCode = t.Topic, kerr.TopicAuthorizationFailed.Code
					rt.ErrorMessage = codeMessage(rt.ErrorCode)
					resp.Topics = append(resp.Topics, rt)
					continue
				}
				allowed = append(allowed, t.Topic)
			}
			res := sc.DeleteShareGroupOffsets(ctx, body.GroupID, allowed)
			if res.ErrorCode != 0 {
				return fail(res.ErrorCode, res.ErrorMessage)
			}
			for _, t := range res.Topics {
				rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
				rt.Topic, rt.TopicID, rt.ErrorCode, rt.ErrorMessage = t.TopicName, t.TopicID, t.ErrorCode, t.ErrorMessage
				resp.Topics = append(resp.Topics, rt)
			}
			return Reply(resp)
		},
	}
}
