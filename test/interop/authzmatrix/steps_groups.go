package main

import "github.com/twmb/franz-go/pkg/kmsg"

func groupSteps() []step {
	return []step{
		{key: 8, what: "g8 simple commit t8-0", build: func() kmsg.Request {
			req := kmsg.NewPtrOffsetCommitRequest()
			req.SetVersion(8)
			req.Group, req.Generation = "g8", -1
			p := kmsg.NewOffsetCommitRequestTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch = 0, 0, -1
			req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t8", Partitions: []kmsg.OffsetCommitRequestTopicPartition{p}}}
			return req
		}, stages: stages(grants(groupACL(opRead, "g8")), grants(topicACL(opRead, "t8")))},
		{key: 9, what: "g9 t9-0", build: func() kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.SetVersion(8)
			req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g9", Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: "t9", Partitions: []int32{0}}}}}
			return req
		}, stages: stages(grants(groupACL(opDescribe, "g9")), grants(topicACL(opDescribe, "t9")))},
		{key: 9, what: "g8 all offsets", build: func() kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.SetVersion(8)
			req.Groups = []kmsg.OffsetFetchRequestGroup{{Group: "g8"}}
			return req
		}, stages: stages(grants(groupACL(opDescribe, "g8")), grants(topicACL(opDescribe, "t8")))},
		{key: 10, what: "group g10", build: func() kmsg.Request {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.SetVersion(4)
			req.CoordinatorType, req.CoordinatorKeys = 0, []string{"g10"}
			return req
		}, stages: stages(grants(groupACL(opDescribe, "g10")))},
		{key: 11, what: "g11 new member", build: func() kmsg.Request {
			req := kmsg.NewPtrJoinGroupRequest()
			req.SetVersion(5)
			req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = "g11", 30000, 30000, "consumer"
			req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0}}}
			return req
		}, stages: stages(grants(groupACL(opRead, "g11")))},
		{key: 12, what: "g12 unknown member", build: func() kmsg.Request {
			req := kmsg.NewPtrHeartbeatRequest()
			req.SetVersion(4)
			req.Group, req.Generation, req.MemberID = "g12", 1, "m"
			return req
		}, stages: stages(grants(groupACL(opRead, "g12")))},
		{key: 13, what: "g13 unknown member", build: func() kmsg.Request {
			req := kmsg.NewPtrLeaveGroupRequest()
			req.SetVersion(4)
			req.Group = "g13"
			req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m"}}
			return req
		}, stages: stages(grants(groupACL(opRead, "g13"))), topOnly: true},
		{key: 14, what: "g14 unknown member", build: func() kmsg.Request {
			req := kmsg.NewPtrSyncGroupRequest()
			req.SetVersion(5)
			req.Group, req.Generation, req.MemberID = "g14", 1, "m"
			req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
			return req
		}, stages: stages(grants(groupACL(opRead, "g14")))},
		{key: 15, what: "g8 and g15 with authorized operations", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.SetVersion(5)
			req.Groups, req.IncludeAuthorizedOperations = []string{"g8", "g15"}, true
			return req
		}, stages: stages(grants(groupACL(opDescribe, "g8")), grants(groupACL(opDescribe, "g15")))},
		{key: 16, what: "all groups", build: func() kmsg.Request {
			req := kmsg.NewPtrListGroupsRequest()
			req.SetVersion(4)
			return req
		}, stages: stages(grants(groupACL(opDescribe, "g8")), grants(clusterACL(opDescribe)))},
		{key: 42, what: "g42", build: func() kmsg.Request {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.SetVersion(2)
			req.Groups = []string{"g42"}
			return req
		}, stages: stages(grants(groupACL(opDelete, "g42")))},
		{key: 47, what: "g8 t8-0 and t47-0", build: func() kmsg.Request {
			req := kmsg.NewPtrOffsetDeleteRequest()
			req.Group = "g8"
			req.Topics = []kmsg.OffsetDeleteRequestTopic{
				{Topic: "t8", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
				{Topic: "t47", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}},
			}
			return req
		}, stages: stages(grants(groupACL(opDelete, "g8")), grants(topicACL(opRead, "t47")))},
		{key: 68, what: "g68 join subscribed to t68 and missing68", build: func() kmsg.Request {
			req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			req.SetVersion(1)
			req.Group, req.MemberID, req.MemberEpoch = "g68", "authzmatrix-member-68", 0
			req.RebalanceTimeoutMillis, req.SubscribedTopicNames = 30000, []string{"t68", "missing68"}
			req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
			return req
		}, stages: stages(grants(groupACL(opRead, "g68")), grants(topicACL(opDescribe, "t68")),
			grants(topicACL(opDescribe, "missing68")))},
		// A regex subscription needs no topic ACL to join; an invalid
		// one is refused only after the group's READ.
		{key: 68, what: "g68r join by regex t6[18]", build: func() kmsg.Request {
			return regexJoin("g68r", "t6[18]")
		}, stages: stages(grants(groupACL(opRead, "g68r")))},
		{key: 68, what: "g68x join by invalid regex t6[8", build: func() kmsg.Request {
			return regexJoin("g68x", "t6[8")
		}, stages: stages(grants(groupACL(opRead, "g68x")))},
		// After the step above g68 is a consumer group whose one member is
		// assigned t68-0, and g11 is a classic group (JoinGroup's step).
		{key: 69, what: "g68, g11 and g69 with authorized operations", build: func() kmsg.Request {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.SetVersion(1)
			req.Groups, req.IncludeAuthorizedOperations = []string{"g68", "g11", "g69"}, true
			return req
		}, stages: stages(grants(groupACL(opDescribe, "g69"), groupACL(opDescribe, "g11")),
			grants(groupACL(opDescribe, "g68")), grants(topicACL(opDescribe, "t68")))},
	}
}

// regexJoin is a ConsumerGroupHeartbeat v1 joining group with a regex
// subscription.
func regexJoin(group, regex string) kmsg.Request {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.SetVersion(1)
	req.Group, req.MemberID, req.MemberEpoch = group, "authzmatrix-member-"+group, 0
	req.RebalanceTimeoutMillis, req.SubscribedTopicRegex = 30000, kmsg.StringPtr(regex)
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	return req
}
