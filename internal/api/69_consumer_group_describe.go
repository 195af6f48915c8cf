package api

// ConsumerGroupDescribe (key 69), versions 0-1: the pinned Kafka release's
// range. Describes KIP-848 consumer groups: epochs, the assignor, each
// member's subscription, current and target assignment; a classic or
// unknown group is GROUP_ID_NOT_FOUND, as in Kafka.
//
// Authorization as Kafka's: DESCRIBE on the group (else
// GROUP_AUTHORIZATION_FAILED); a group whose members are assigned topics
// the principal may not describe is TOPIC_AUTHORIZATION_FAILED.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func newConsumerGroupDescribeHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 69, MinVersion: 0, MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ConsumerGroupDescribeRequest)
			resp := kmsg.NewPtrConsumerGroupDescribeResponse()
			resp.SetVersion(body.Version)
			for _, id := range body.Groups {
				rg := kmsg.NewConsumerGroupDescribeResponseGroup()
				rg.Group = id
				if !req.authorize(opDescribe, resGroup, id) {
					rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
					resp.Groups = append(resp.Groups, rg)
					continue
				}
				d := gd.Coordinator.ConsumerGroupDescribe(ctx, id)
				describedGroup(req, body.Version, &rg, d)
				if rg.ErrorCode == 0 && body.IncludeAuthorizedOperations {
					rg.AuthorizedOperations = req.authorizedOperations(resGroup, id, allGroupOperations)
				}
				resp.Groups = append(resp.Groups, rg)
			}
			return Reply(resp)
		},
	}
}

func describedGroup(req *Request, version int16, rg *kmsg.ConsumerGroupDescribeResponseGroup, d group.ConsumerGroupDescription) {
	rg.ErrorCode, rg.ErrorMessage = d.ErrorCode, d.ErrorMessage
	if d.ErrorCode != 0 {
		return
	}
	rg.State, rg.Epoch, rg.AssignmentEpoch, rg.AssignorName = d.State, d.GroupEpoch, d.AssignmentEpoch, d.AssignorName
	rg.Members = []kmsg.ConsumerGroupDescribeResponseGroupMember{}
	for _, md := range d.Members {
		m := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		m.MemberID, m.InstanceID, m.RackID, m.MemberEpoch = md.MemberID, md.InstanceID, md.RackID, md.MemberEpoch
		m.ClientID, m.ClientHost = md.ClientID, md.ClientHost
		m.SubscribedTopics, m.SubscribedTopicRegex = md.SubscribedTopicNames, md.SubscribedTopicRegex
		ok := true
		m.Assignment.TopicPartitions, ok = describedTopics(req, md.Assignment, ok)
		m.TargetAssignment.TopicPartitions, ok = describedTopics(req, md.TargetAssignment, ok)
		if !ok {
			rg.ErrorCode, rg.Members = kerr.TopicAuthorizationFailed.Code, nil
			msg := "The group has described topic(s) that the client is not authorized to describe."
			rg.ErrorMessage = &msg
			return
		}
		if version >= 1 {
			m.MemberType = 1
			if md.Classic {
				m.MemberType = 0
			}
		}
		rg.Members = append(rg.Members, m)
	}
}

func describedTopics(req *Request, parts []group.DescribedPartitions, ok bool) ([]kmsg.AssignmentTopicPartition, bool) {
	out := []kmsg.AssignmentTopicPartition{}
	for _, p := range parts {
		if !req.authorize(opDescribe, resTopic, p.TopicName) {
			ok = false
		}
		t := kmsg.NewAssignmentTopicPartition()
		t.TopicID, t.Topic, t.Partitions = p.TopicID, p.TopicName, p.Partitions
		out = append(out, t)
	}
	return out, ok
}
