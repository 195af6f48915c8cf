package api

// ShareGroupDescribe (key 77), version 1: the pinned Kafka release's
// range. Describes share groups: state (Empty or Stable), epochs, the
// "simple" assignor, each member's client, rack, subscription and
// assignment; an unknown group or one of another type is
// GROUP_ID_NOT_FOUND with Kafka's message.
//
// Authorization as Kafka's: DESCRIBE on the group (else
// GROUP_AUTHORIZATION_FAILED); a group whose members are assigned topics
// the principal may not describe is TOPIC_AUTHORIZATION_FAILED, without
// its members.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func newShareGroupDescribeHandler(sc ShareGroupCoordinator) Handler {
	return Handler{
		Key: 77, MinVersion: 1, MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ShareGroupDescribeRequest)
			resp := kmsg.NewPtrShareGroupDescribeResponse()
			resp.SetVersion(body.Version)
			for _, id := range body.GroupIDs {
				rg := kmsg.NewShareGroupDescribeResponseGroup()
				rg.GroupID = id
				if !req.authorize(opDescribe, resGroup, id) {
					rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
					resp.Groups = append(resp.Groups, rg)
					continue
				}
				describedShareGroup(req, &rg, sc.ShareGroupDescribe(ctx, id))
				if rg.ErrorCode == 0 && body.IncludeAuthorizedOperations {
					rg.AuthorizedOperations = req.authorizedOperations(resGroup, id, allGroupOperations)
				}
				resp.Groups = append(resp.Groups, rg)
			}
			return Reply(resp)
		},
	}
}

func describedShareGroup(req *Request, rg *kmsg.ShareGroupDescribeResponseGroup, d group.ShareGroupDescription) {
	rg.ErrorCode, rg.ErrorMessage = d.ErrorCode, d.ErrorMessage
	if d.ErrorCode != 0 {
		return
	}
	rg.GroupState, rg.GroupEpoch, rg.AssignmentEpoch, rg.Assignor = d.State, d.GroupEpoch, d.AssignmentEpoch, d.AssignorName
	rg.Members = []kmsg.ShareGroupDescribeResponseGroupMember{}
	ok := true
	for _, md := range d.Members {
		m := kmsg.NewShareGroupDescribeResponseGroupMember()
		m.MemberID, m.RackID, m.MemberEpoch = md.MemberID, md.RackID, md.MemberEpoch
		m.ClientID, m.ClientHost, m.SubscribedTopicNames = md.ClientID, md.ClientHost, md.SubscribedTopicNames
		if m.SubscribedTopicNames == nil {
			m.SubscribedTopicNames = []string{}
		}
		m.Assignment.TopicPartitions, ok = describedShareTopics(req, md.Assignment, ok)
		rg.Members = append(rg.Members, m)
	}
	if !ok {
		rg.ErrorCode, rg.Members = kerr.TopicAuthorizationFailed.Code, []kmsg.ShareGroupDescribeResponseGroupMember{}
		msg := "The group has described topic(s) that the client is not authorized to describe."
		rg.ErrorMessage = &msg
	}
}

func describedShareTopics(req *Request, parts []group.DescribedPartitions, ok bool) ([]kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition, bool) {
	out := []kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{}
	for _, p := range parts {
		if !req.authorize(opDescribe, resTopic, p.TopicName) {
			ok = false
		}
		t := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
		t.TopicID, t.Topic, t.Partitions = p.TopicID, p.TopicName, p.Partitions
		out = append(out, t)
	}
	return out, ok
}
