package api

// ShareGroupHeartbeat (key 76), version 1: the pinned Kafka release's
// range (v0 was KIP-932's early access, gone from 4.4). Share groups
// (KIP-932): members heartbeat with a member id they chose, the
// coordinator assigns every subscribed partition to at least one member
// (coordinator/group, the "simple" assignor).
//
// Checks as Kafka's KafkaApis, in its order: READ on the group (else
// GROUP_AUTHORIZATION_FAILED), a member id of 1 to 36 characters (else
// INVALID_REQUEST), DESCRIBE on every subscribed topic (else
// TOPIC_AUTHORIZATION_FAILED); these answers carry no message, as
// Kafka's (checked against 4.4.0). Kafka first answers
// UNSUPPORTED_VERSION while share.version is not enabled: the handler is
// registered only once share groups work end to end.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

// ShareGroupCoordinator is what the share group handlers need of the
// group coordinator (*groupcoord.GroupCoordinator).
type ShareGroupCoordinator interface {
	ShareGroupHeartbeat(ctx context.Context, req group.ShareHeartbeatRequest) group.ShareHeartbeatResult
	ShareGroupDescribe(ctx context.Context, groupID string) group.ShareGroupDescription
}

func newShareGroupHeartbeatHandler(sc ShareGroupCoordinator) Handler {
	return Handler{
		Key: 76, MinVersion: 1, MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ShareGroupHeartbeatRequest)
			resp := kmsg.NewPtrShareGroupHeartbeatResponse()
			resp.SetVersion(body.Version)
			fail := func(code int16, msg *string) Response {
				resp.ErrorCode, resp.ErrorMessage = code, msg
				return Reply(resp)
			}
			// KafkaApis' own refusals carry no message (the request's
			// getErrorResponse keeps only the code).
			if !req.authorize(opRead, resGroup, body.GroupID) {
				return fail(kerr.GroupAuthorizationFailed.Code, nil)
			}
			if n := len(body.MemberID); n == 0 || n > 36 {
				return fail(kerr.InvalidRequest.Code, nil)
			}
			if len(body.SubscribedTopicNames) > 0 {
				ok := req.filterAuthorized(opDescribe, resTopic, body.SubscribedTopicNames)
				for _, allowed := range ok {
					if !allowed {
						return fail(kerr.TopicAuthorizationFailed.Code, nil)
					}
				}
			}
			res := sc.ShareGroupHeartbeat(ctx, group.ShareHeartbeatRequest{
				GroupID: body.GroupID, MemberID: body.MemberID, MemberEpoch: body.MemberEpoch, RackID: body.RackID,
				SubscribedTopicNames: body.SubscribedTopicNames, ClientID: req.Header.ClientIDString(), ClientHost: clientHost(req),
			})
			if res.ErrorCode != 0 {
				// Kafka's error answers leave the member id null, the
				// epoch 0, and carry the error's message.
				msg := res.ErrorMessage
				if msg == nil {
					d := kerr.ErrorForCode(res.ErrorCode).(*kerr.Error).Description
					msg = &d
				}
				return fail(res.ErrorCode, msg)
			}
			resp.MemberID = &res.MemberID
			resp.MemberEpoch = res.MemberEpoch
			resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval / time.Millisecond)
			if res.Assignment != nil {
				a := kmsg.NewShareGroupHeartbeatResponseAssignment()
				a.TopicPartitions = []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}
				for _, tp := range res.Assignment {
					t := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
					t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
					a.TopicPartitions = append(a.TopicPartitions, t)
				}
				resp.Assignment = &a
			}
			return Reply(resp)
		},
	}
}
