package main

import "github.com/twmb/franz-go/pkg/kmsg"

func adminSteps() []step {
	return []step{
		{key: 19, what: "c19 and c19b", build: func() kmsg.Request {
			req := kmsg.NewPtrCreateTopicsRequest()
			req.SetVersion(7)
			req.TimeoutMillis, req.ValidateOnly = 30000, true
			for _, n := range []string{"c19", "c19b"} {
				t := kmsg.NewCreateTopicsRequestTopic()
				t.Topic, t.NumPartitions, t.ReplicationFactor = n, 1, 1
				req.Topics = append(req.Topics, t)
			}
			return req
		}, stages: stages(grants(topicACL(opCreate, "c19")), grants(topicACL(opDescribeConfigs, "c19")), grants(clusterACL(opCreate)))},
		{key: 20, what: "t20 and nothere20 by name", build: func() kmsg.Request {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.SetVersion(6)
			req.TimeoutMillis = 30000
			req.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr("nothere20")}, {Topic: kmsg.StringPtr("t20")}}
			return req
		}, stages: stages(grants(topicACL(opDescribe, "t20"), topicACL(opDescribe, "nothere20")), grants(topicACL(opDelete, "t20")))},
		{key: 32, what: "topic t32 and broker", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeConfigsRequest()
			req.SetVersion(4)
			req.Resources = []kmsg.DescribeConfigsRequestResource{
				{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t32", ConfigNames: []string{"retention.ms"}},
				{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "", ConfigNames: []string{"log.retention.ms"}},
			}
			return req
		}, stages: stages(grants(topicACL(opAlterConfigs, "t32")), grants(clusterACL(opDescribeConfigs)))},
		{key: 33, what: "topic t33 retention.ms, validate only", build: func() kmsg.Request {
			req := kmsg.NewPtrAlterConfigsRequest()
			req.SetVersion(2)
			req.ValidateOnly = true
			req.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t33",
				Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("100000")}}}}
			return req
		}, stages: stages(grants(topicACL(opAlterConfigs, "t33")))},
		{key: 37, what: "t37 to 2 partitions, validate only", build: func() kmsg.Request {
			req := kmsg.NewPtrCreatePartitionsRequest()
			req.SetVersion(3)
			req.TimeoutMillis, req.ValidateOnly = 30000, true
			req.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "t37", Count: 2}}
			return req
		}, stages: stages(grants(topicACL(opAlter, "t37")))},
		{key: 44, what: "topic t44 retention.ms, validate only", build: func() kmsg.Request {
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			req.SetVersion(1)
			req.ValidateOnly = true
			req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t44",
				Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "retention.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr("100000")}}}}
			return req
		}, stages: stages(grants(topicACL(opAlterConfigs, "t44")))},
		{key: 44, what: "broker default log.retention.ms, validate only", build: func() kmsg.Request {
			req := kmsg.NewPtrIncrementalAlterConfigsRequest()
			req.SetVersion(1)
			req.ValidateOnly = true
			req.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "",
				Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "log.retention.ms", Op: kmsg.IncrementalAlterConfigOpSet, Value: kmsg.StringPtr("100000")}}}}
			return req
		}, stages: stages(grants(clusterACL(opAlterConfigs)))},
	}
}

func clusterSteps() []step {
	return []step{
		{key: 29, what: "every binding", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeACLsRequest()
			req.SetVersion(3)
			req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
			req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			return req
		}, stages: stages(grants(clusterACL(opDescribe))), topOnly: true},
		{key: 30, what: "READ on topic z30 for User:bob", build: func() kmsg.Request {
			req := kmsg.NewPtrCreateACLsRequest()
			req.SetVersion(3)
			req.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "z30",
				ResourcePatternType: kmsg.ACLResourcePatternTypeLiteral, Principal: "User:bob", Host: "*",
				Operation: opRead, PermissionType: kmsg.ACLPermissionTypeAllow}}
			return req
		}, stages: stages(grants(clusterACL(opAlter)))},
		{key: 31, what: "bindings of topic z30", build: func() kmsg.Request {
			req := kmsg.NewPtrDeleteACLsRequest()
			req.SetVersion(3)
			f := kmsg.NewDeleteACLsRequestFilter()
			f.ResourceType, f.ResourceName, f.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.StringPtr("z30"), kmsg.ACLResourcePatternTypeLiteral
			f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			req.Filters = []kmsg.DeleteACLsRequestFilter{f}
			return req
		}, stages: stages(grants(clusterACL(opAlter)))},
		{key: 35, what: "every partition", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeLogDirsRequest()
			req.SetVersion(4)
			return req
		}, stages: stages(grants(clusterACL(opDescribe))), topOnly: true},
		{key: 43, what: "preferred leader of t43-0", build: func() kmsg.Request {
			req := kmsg.NewPtrElectLeadersRequest()
			req.SetVersion(2)
			req.TimeoutMillis = 30000
			req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "t43", Partitions: []int32{0}}}
			return req
		}, stages: stages(grants(clusterACL(opAlter)))},
		{key: 45, what: "cancel t45-0", build: func() kmsg.Request {
			req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			req.TimeoutMillis = 30000
			req.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "t45", Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0}}}}
			return req
		}, stages: stages(grants(clusterACL(opAlter)))},
		{key: 46, what: "every reassignment", build: func() kmsg.Request {
			req := kmsg.NewPtrListPartitionReassignmentsRequest()
			req.TimeoutMillis = 30000
			return req
		}, stages: stages(grants(clusterACL(opDescribe)))},
		{key: 48, what: "every entity", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeClientQuotasRequest()
			req.SetVersion(1)
			return req
		}, stages: stages(grants(clusterACL(opDescribeConfigs)))},
		{key: 49, what: "user alice producer_byte_rate, validate only", build: func() kmsg.Request {
			req := kmsg.NewPtrAlterClientQuotasRequest()
			req.SetVersion(1)
			req.ValidateOnly = true
			req.Entries = []kmsg.AlterClientQuotasRequestEntry{{
				Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr("alice")}},
				Ops:    []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1024}},
			}}
			return req
		}, stages: stages(grants(clusterACL(opAlterConfigs)))},
		{key: 50, what: "user alice", build: func() kmsg.Request {
			// A null user list is every user; Kafka 4.4 leaves such a
			// request unanswered when it refuses it, so one user is named.
			req := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
			req.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "alice"}}
			return req
		}, stages: stages(grants(clusterACL(opDescribe)))},
		{key: 51, what: "delete alice SCRAM-SHA-256", build: func() kmsg.Request {
			req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			req.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "alice", Mechanism: 1}}
			return req
		}, stages: stages(grants(clusterACL(opAlter)))},
		{key: 55, what: "__cluster_metadata-0", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeQuorumRequest()
			req.SetVersion(2)
			req.Topics = []kmsg.DescribeQuorumRequestTopic{{Topic: "__cluster_metadata", Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}}}
			return req
		}, stages: stages(grants(clusterACL(opDescribe)))},
		{key: 60, what: "with authorized operations", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeClusterRequest()
			req.SetVersion(1)
			req.IncludeClusterAuthorizedOperations = true
			return req
		}, stages: stages(grants(clusterACL(opDescribe)), grants(clusterACL(opAlterConfigs)))},
	}
}
