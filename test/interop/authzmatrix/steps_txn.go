package main

import "github.com/twmb/franz-go/pkg/kmsg"

func txnSteps() []step {
	return []step{
		{key: 22, what: "idempotent", build: func() kmsg.Request {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.SetVersion(4)
			req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = -1, -1, -1
			return req
		}, stages: stages(grants(topicACL(opWrite, "t22")))},
		{key: 22, what: "transactional x22", build: func() kmsg.Request {
			req := kmsg.NewPtrInitProducerIDRequest()
			req.SetVersion(4)
			req.TransactionalID = kmsg.StringPtr("x22")
			req.TransactionTimeoutMillis, req.ProducerID, req.ProducerEpoch = 60000, -1, -1
			return req
		}, stages: stages(grants(txnACL(opDescribe, "x22")), grants(txnACL(opWrite, "x22")))},
		{key: 10, what: "transaction x10", build: func() kmsg.Request {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.SetVersion(4)
			req.CoordinatorType, req.CoordinatorKeys = 1, []string{"x10"}
			return req
		}, stages: stages(grants(txnACL(opDescribe, "x10")))},
		{key: 24, what: "x24 t24-0 (client, v3)", build: func() kmsg.Request {
			req := kmsg.NewPtrAddPartitionsToTxnRequest()
			req.SetVersion(3)
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = "x24", 0, 0
			req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t24", Partitions: []int32{0}}}
			return req
		}, stages: stages(grants(txnACL(opWrite, "x24")), grants(topicACL(opWrite, "t24")))},
		{key: 24, what: "x24 t24-0 verify only (broker, v4)", build: func() kmsg.Request {
			req := kmsg.NewPtrAddPartitionsToTxnRequest()
			req.SetVersion(4)
			t := kmsg.NewAddPartitionsToTxnRequestTransaction()
			t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly = "x24", 0, 0, true
			t.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t24", Partitions: []int32{0}}}
			req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{t}
			return req
		}, stages: stages(grants(clusterACL(opClusterAction))), topOnly: true},
		{key: 25, what: "x25 group g25", build: func() kmsg.Request {
			req := kmsg.NewPtrAddOffsetsToTxnRequest()
			req.SetVersion(3)
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "x25", 0, 0, "g25"
			return req
		}, stages: stages(grants(txnACL(opWrite, "x25")), grants(groupACL(opRead, "g25")))},
		{key: 26, what: "x26 commit", build: func() kmsg.Request {
			req := kmsg.NewPtrEndTxnRequest()
			req.SetVersion(3)
			req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = "x26", 0, 0, true
			return req
		}, stages: stages(grants(txnACL(opWrite, "x26")))},
		{key: 27, what: "commit marker for t27-0", build: func() kmsg.Request {
			req := kmsg.NewPtrWriteTxnMarkersRequest()
			req.SetVersion(1)
			m := kmsg.NewWriteTxnMarkersRequestMarker()
			m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch = 4242, 0, true, 0
			m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "t27", Partitions: []int32{0}}}
			req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
			return req
		}, stages: stages(grants(clusterACL(opClusterAction)))},
		{key: 28, what: "x28 g28 t28-0", build: func() kmsg.Request {
			req := kmsg.NewPtrTxnOffsetCommitRequest()
			req.SetVersion(3)
			req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch, req.Generation = "x28", "g28", 0, 0, -1
			p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			p.Partition, p.Offset, p.LeaderEpoch = 0, 0, -1
			req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t28", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{p}}}
			return req
		}, stages: stages(grants(txnACL(opWrite, "x28")), grants(groupACL(opRead, "g28")), grants(topicACL(opRead, "t28")))},
		{key: 65, what: "x22 and x65", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = []string{"x22", "x65"}
			return req
		}, stages: stages(grants(txnACL(opDescribe, "x22")), grants(txnACL(opDescribe, "x65")))},
		{key: 66, what: "every transaction", build: func() kmsg.Request {
			req := kmsg.NewPtrListTransactionsRequest()
			req.SetVersion(1)
			req.DurationFilterMillis = -1
			return req
		}, stages: stages(grants(txnACL(opDescribe, "x22")))},
	}
}
