package main

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Operations, short.
const (
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
)

func stages(s ...[]acl) [][]acl { return s }
func grants(a ...acl) []acl     { return a }

// steps are the matrix, in key order.
func steps() []step {
	var all []step
	for _, group := range [][]step{dataSteps(), groupSteps(), adminSteps(), txnSteps(), clusterSteps()} {
		all = append(all, group...)
	}
	return all
}

func dataSteps() []step {
	return []step{
		{key: 0, what: "t0-0 acks=1", build: func() kmsg.Request {
			req := kmsg.NewPtrProduceRequest()
			req.SetVersion(11)
			req.Acks, req.TimeoutMillis = 1, 10000
			req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t0", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: batch()}}}}
			return req
		}, stages: stages(grants(topicACL(opWrite, "t0")))},
		{key: 1, what: "t1-0 from offset 0", build: func() kmsg.Request {
			req := kmsg.NewPtrFetchRequest()
			req.SetVersion(12)
			req.ReplicaID, req.MaxWaitMillis, req.MaxBytes, req.SessionEpoch = -1, 0, 1<<20, -1
			p := kmsg.NewFetchRequestTopicPartition()
			p.Partition, p.FetchOffset, p.PartitionMaxBytes, p.CurrentLeaderEpoch, p.LastFetchedEpoch = 0, 0, 1<<20, -1, -1
			req.Topics = []kmsg.FetchRequestTopic{{Topic: "t1", Partitions: []kmsg.FetchRequestTopicPartition{p}}}
			return req
		}, stages: stages(grants(topicACL(opRead, "t1")))},
		{key: 2, what: "t2-0 latest", build: func() kmsg.Request {
			req := kmsg.NewPtrListOffsetsRequest()
			req.SetVersion(8)
			req.ReplicaID = -1
			p := kmsg.NewListOffsetsRequestTopicPartition()
			p.Partition, p.Timestamp = 0, -1
			req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t2", Partitions: []kmsg.ListOffsetsRequestTopicPartition{p}}}
			return req
		}, stages: stages(grants(topicACL(opDescribe, "t2")))},
		{key: 3, what: "t3 and missing3 with authorized operations", build: func() kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(10)
			req.IncludeClusterAuthorizedOperations, req.IncludeTopicAuthorizedOperations = true, true
			for _, n := range []string{"t3", "missing3"} {
				req.Topics = append(req.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(n)})
			}
			return req
		}, stages: stages(grants(topicACL(opRead, "t3")), grants(clusterACL(opDescribe)))},
		{key: 3, what: "all topics", build: func() kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(12)
			req.Topics = nil
			return req
		}, stages: stages(grants(topicACL(opDescribe, "t3"), topicACL(opWrite, "t0")))},
		{key: 3, what: "auto-create auto3", build: func() kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			req.SetVersion(12)
			req.AllowAutoTopicCreation = true
			req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("auto3")}}
			return req
		}, stages: stages(grants(topicACL(opDescribe, "auto3")), grants(topicACL(opCreate, "auto3"))), noRetry: true},
		{key: 21, what: "t21-0 before offset 0", build: func() kmsg.Request {
			req := kmsg.NewPtrDeleteRecordsRequest()
			req.SetVersion(2)
			req.TimeoutMillis = 10000
			req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "t21", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 0}}}}
			return req
		}, stages: stages(grants(topicACL(opDelete, "t21")))},
		{key: 23, what: "t23-0 epoch 0", build: func() kmsg.Request {
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.SetVersion(4)
			req.ReplicaID = -1
			p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			p.Partition, p.CurrentLeaderEpoch, p.LeaderEpoch = 0, -1, 0
			req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "t23", Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{p}}}
			return req
		}, stages: stages(grants(topicACL(opDescribe, "t23")))},
		{key: 61, what: "t61-0", build: func() kmsg.Request {
			req := kmsg.NewPtrDescribeProducersRequest()
			req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t61", Partitions: []int32{0}}}
			return req
		}, stages: stages(grants(topicACL(opRead, "t61")))},
		{key: 18, what: "no ACL needed", build: func() kmsg.Request {
			req := kmsg.NewPtrApiVersionsRequest()
			req.SetVersion(3)
			req.ClientSoftwareName, req.ClientSoftwareVersion = "authzmatrix", "1"
			return req
		}, topOnly: true},
	}
}

// batch is a record batch v2 of one record, without a producer id.
func batch() []byte {
	rec := kmsg.NewRecord()
	rec.Value = []byte("matrix")
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	b := kmsg.NewRecordBatch()
	b.Magic, b.PartitionLeaderEpoch = 2, -1
	b.FirstTimestamp, b.MaxTimestamp = 1_700_000_000_000, 1_700_000_000_000
	b.ProducerID, b.ProducerEpoch, b.FirstSequence = -1, -1, -1
	b.NumRecords = 1
	b.Records = rec.AppendTo(nil)
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}
