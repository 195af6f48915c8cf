package api

// ConsumerGroupHeartbeat (key 68), versions 0-1: the pinned Kafka release's
// range. The KIP-848 consumer group protocol: members heartbeat, the
// coordinator computes the target assignment with a server-side assignor
// (group.consumer.assignors) and hands each member its partitions
// incrementally (coordinator/group).
//
// Authorization as Kafka's: READ on the group (else
// GROUP_AUTHORIZATION_FAILED), DESCRIBE on every subscribed topic name
// (else TOPIC_AUTHORIZATION_FAILED naming them); topics matched by a
// subscribed regex are kept only where the member may DESCRIBE them.

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
)

func newConsumerGroupHeartbeatHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 68, MinVersion: 0, MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ConsumerGroupHeartbeatRequest)
			resp := kmsg.NewPtrConsumerGroupHeartbeatResponse()
			// An error answer leaves the member id null and the epoch 0,
			// as Kafka's does.
			resp.SetVersion(body.Version)
			fail := func(code int16, msg string) Response {
				resp.ErrorCode, resp.ErrorMessage = code, &msg
				return Reply(resp)
			}
			if !req.authorize(opRead, resGroup, body.Group) {
				return fail(kerr.GroupAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Description)
			}
			if body.SubscribedTopicNames != nil {
				var denied []string
				for _, t := range body.SubscribedTopicNames {
					if !req.authorize(opDescribe, resTopic, t) {
						denied = append(denied, t)
					}
				}
				if len(denied) > 0 {
					slices.Sort(denied)
					return fail(kerr.TopicAuthorizationFailed.Code, "The following topics are unauthorized: "+strings.Join(slices.Compact(denied), ", "))
				}
			}
			res := gd.Coordinator.ConsumerGroupHeartbeat(ctx, heartbeatRequest(req, body), body.Version)
			resp.ErrorCode, resp.ErrorMessage = res.ErrorCode, res.ErrorMessage
			if res.ErrorCode != 0 {
				if resp.ErrorMessage == nil {
					msg := kerr.ErrorForCode(res.ErrorCode).(*kerr.Error).Description
					resp.ErrorMessage = &msg
				}
				return Reply(resp)
			}
			if res.MemberID != "" {
				resp.MemberID = &res.MemberID
			}
			resp.MemberEpoch = res.MemberEpoch
			resp.HeartbeatIntervalMillis = int32(res.HeartbeatInterval / time.Millisecond)
			if res.Assignment != nil {
				a := kmsg.NewConsumerGroupHeartbeatResponseAssignment()
				a.Topics = []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{}
				for _, tp := range res.Assignment {
					t := kmsg.NewConsumerGroupHeartbeatResponseAssignmentTopic()
					t.TopicID, t.Partitions = tp.TopicID, tp.Partitions
					a.Topics = append(a.Topics, t)
				}
				resp.Assignment = &a
			}
			return Reply(resp)
		},
	}
}

func heartbeatRequest(req *Request, body *kmsg.ConsumerGroupHeartbeatRequest) group.ConsumerHeartbeatRequest {
	hr := group.ConsumerHeartbeatRequest{
		GroupID: body.Group, MemberID: body.MemberID, MemberEpoch: body.MemberEpoch,
		InstanceID: body.InstanceID, RackID: body.RackID, RebalanceTimeoutMs: body.RebalanceTimeoutMillis,
		SubscribedTopicNames: body.SubscribedTopicNames, SubscribedTopicRegex: body.SubscribedTopicRegex,
		ServerAssignor: body.ServerAssignor, ClientID: req.Header.ClientIDString(), ClientHost: clientHost(req),
	}
	if req.hasAuthorizer() {
		hr.CanDescribe = func(topic string) bool { return req.authorize(opDescribe, resTopic, topic) }
	}
	if body.Topics != nil {
		hr.Owned = make([]group.TopicPartitions, 0, len(body.Topics))
		for _, t := range body.Topics {
			hr.Owned = append(hr.Owned, group.TopicPartitions{TopicID: kafka.UUID(t.TopicID), Partitions: t.Partitions})
		}
	}
	return hr
}
