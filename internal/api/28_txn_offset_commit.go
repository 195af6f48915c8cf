package api

// TxnOffsetCommit (key 28), versions 0-6: the pinned Kafka release's range.
//
// A transactional producer commits a consumer group's offsets within its
// transaction. The group coordinator writes them to the group's
// __consumer_offsets partition as a transactional batch of the producer and
// answers once they are durable; they stay pending, unseen by OffsetFetch
// (UNSTABLE_OFFSET_COMMIT with require_stable), until the transaction's
// marker commits or aborts them. From v3 the member id, group instance id
// and generation are checked as Kafka's classic group does (UNKNOWN_MEMBER_ID,
// FENCED_INSTANCE_ID, ILLEGAL_GENERATION); a commit without them is taken
// even by a group with members or in a rebalance; a group that does not
// exist is created empty for a commit without a generation and refuses one
// with a generation (ILLEGAL_GENERATION). Metadata over
// offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE. Partitions the
// metadata does not know get UNKNOWN_TOPIC_OR_PARTITION (v6 names topics by
// id: UNKNOWN_TOPIC_ID, as OffsetCommit v10). Before v2,
// COORDINATOR_LOAD_IN_PROGRESS is answered as COORDINATOR_NOT_AVAILABLE, as
// Kafka does for clients older than 2.0 (KAFKA-7296).
//
// The group coordinator first verifies the transaction with the
// transaction coordinator (KIP-890); from v5 (Transactions V2) that adds the
// group's offsets partition to the transaction, as the client no longer
// sends AddOffsetsToTxn.
//
// Deviation: the handler is registered only when the broker is given a
// TxnOffsetCommitter (transactions wired).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/groupcoord"
	"github.com/sluice-io/sluice/internal/kafka"
)

// TxnOffsetCommitter is the group coordinator's side of TxnOffsetCommit
// (GroupPlaneDeps.TxnOffsets); *groupcoord.GroupCoordinator implements it.
type TxnOffsetCommitter interface {
	CommitTransactionalOffsets(ctx context.Context, req group.TxnCommitRequest) group.CommitResult
}

var _ TxnOffsetCommitter = (*groupcoord.GroupCoordinator)(nil)

func newTxnOffsetCommitHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 28, MinVersion: 0, MaxVersion: 6,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.TxnOffsetCommitRequest)
			// Kafka: WRITE on the transactional id, READ on the group (each
			// refusal on every partition), READ on each topic.
			switch {
			case !req.authorize(opWrite, resTxnID, body.TransactionalID):
				return Reply(txnOffsetCommitError(body, kerr.TransactionalIDAuthorizationFailed.Code))
			case !req.authorize(opRead, resGroup, body.Group):
				return Reply(txnOffsetCommitError(body, kerr.GroupAuthorizationFailed.Code))
			}
			return Reply(txnOffsetCommit(ctx, gd, body, req.topicCheck(opRead)))
		},
	}
}

// txnOffsetCommitError is Kafka's TxnOffsetCommitRequest.getErrorResponse:
// the code on every partition.
func txnOffsetCommitError(req *kmsg.TxnOffsetCommitRequest, code int16) *kmsg.TxnOffsetCommitResponse {
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	resp.SetVersion(req.Version)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func txnOffsetCommit(ctx context.Context, gd *GroupPlaneDeps, req *kmsg.TxnOffsetCommitRequest, readable func(string) bool) *kmsg.TxnOffsetCommitResponse {
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	resp.SetVersion(req.Version)
	tr := group.TxnCommitRequest{GroupID: req.Group, TransactionalID: req.TransactionalID, Version: req.Version,
		ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch, GenerationID: -1}
	if req.Version >= 3 {
		tr.MemberID, tr.InstanceID, tr.GenerationID = req.MemberID, req.InstanceID, req.Generation
	}
	slots := txnCommitPartitions(gd, req, resp, &tr, readable)
	if len(tr.Partitions) == 0 {
		return resp
	}
	res := gd.TxnOffsets.CommitTransactionalOffsets(ctx, tr)
	for i := range resp.Topics {
		for j, k := range slots[i] {
			if k < 0 {
				continue
			}
			code := res.Errors[k]
			if req.Version < 2 && code == kerr.CoordinatorLoadInProgress.Code {
				code = kerr.CoordinatorNotAvailable.Code
			}
			resp.Topics[i].Partitions[j].ErrorCode = code
		}
	}
	return resp
}

// txnCommitPartitions fills resp with the request's topics and partitions,
// refusing those the metadata does not know, and adds the others to tr. It
// returns, for topic i partition j, the partition's index in tr.Partitions,
// or -1 when refused here.
func txnCommitPartitions(gd *GroupPlaneDeps, req *kmsg.TxnOffsetCommitRequest, resp *kmsg.TxnOffsetCommitResponse, tr *group.TxnCommitRequest, readable func(string) bool) [][]int {
	im := gd.image()
	slots := make([][]int, len(req.Topics))
	for i, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		name, unknownCode := t.Topic, kerr.UnknownTopicOrPartition.Code
		if req.Version >= 6 {
			name, unknownCode = "", kerr.UnknownTopicID.Code
			if topic, ok := im.TopicByID(kafka.UUID(t.TopicID)); ok {
				name = topic.Name
			}
		}
		slots[i] = make([]int, len(t.Partitions))
		for j, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			if name == "" || !readable(name) || !partitionExists(im, name, p.Partition) {
				slots[i][j] = -1
				rp.ErrorCode = unknownCode
				if name != "" && !readable(name) {
					rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				}
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			slots[i][j] = len(tr.Partitions)
			tr.Partitions = append(tr.Partitions, group.CommitPartition{
				TP: kafka.TopicPartition{Topic: name, Partition: p.Partition}, Offset: p.Offset,
				LeaderEpoch: p.LeaderEpoch, Metadata: p.Metadata,
			})
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return slots
}
