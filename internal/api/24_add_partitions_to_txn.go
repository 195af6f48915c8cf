package api

// AddPartitionsToTxn (key 24), versions 0-5: the pinned Kafka release's
// range.
//
// v0-3 come from a transactional producer: its partitions are added to its
// transaction once the coordinator's state is durable, one code for them
// all. A partition the metadata does not know is UNKNOWN_TOPIC_OR_PARTITION
// and an internal topic TOPIC_AUTHORIZATION_FAILED (Kafka's authorizer
// never lets a client write one), and then nothing is added: the other
// partitions answer OPERATION_NOT_ATTEMPTED. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2.
//
// v4-5 come from partition leaders (KIP-890), batched by transaction: with
// VerifyOnly the coordinator answers for each partition whether it is in
// the ongoing transaction (TRANSACTION_ABORTABLE when not); without it
// (Transactions V2's implicit add of a Produce v12+) the partitions are
// added as from v0-3, v5 recording the transaction as TV2. Unknown
// partitions are refused per transaction as in v0-3.
//
// Authorization as Kafka's: v0-3 need WRITE on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition) and WRITE on
// each topic (TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED);
// v4+ need CLUSTER_ACTION on the cluster (CLUSTER_AUTHORIZATION_FAILED for
// the request): brokers' principals must be super users or granted it.

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

func newAddPartitionsToTxnHandler(td *TxnPlaneDeps) Handler {
	return Handler{
		Key: 24, MinVersion: 0, MaxVersion: 5,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AddPartitionsToTxnRequest)
			if body.Version < 4 {
				if !req.authorize(opWrite, resTxnID, body.TransactionalID) {
					return Reply(addPartitionsV3Error(body, kerr.TransactionalIDAuthorizationFailed.Code))
				}
				return Reply(addPartitionsV3(ctx, td, body, req.topicCheck(opWrite)))
			}
			if !req.authorizeCluster(opClusterAction) {
				resp := kmsg.NewPtrAddPartitionsToTxnResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				return Reply(resp)
			}
			return Reply(addPartitionsV4(ctx, td, body))
		},
	}
}

// txnPartitions is one transaction's partitions, in request order.
type txnPartitions struct {
	topics []string
	parts  [][]int32
}

func (p txnPartitions) list() []kafka.TopicPartition {
	var out []kafka.TopicPartition
	for i, t := range p.topics {
		for _, part := range p.parts[i] {
			out = append(out, kafka.TopicPartition{Topic: t, Partition: part})
		}
	}
	return out
}

// checkPartitions returns each partition's code when any is refused
// (Kafka's all-or-nothing check), or nil when all may be added.
func checkPartitions(im *metadata.Image, parts []kafka.TopicPartition, fromClient bool, writable func(string) bool) []int16 {
	codes := make([]int16, len(parts))
	refused := false
	for i, tp := range parts {
		switch {
		case fromClient && (isInternalTopic(tp.Topic) || !writable(tp.Topic)):
			codes[i], refused = kerr.TopicAuthorizationFailed.Code, true
		case !partitionExists(im, tp.Topic, tp.Partition):
			codes[i], refused = kerr.UnknownTopicOrPartition.Code, true
		}
	}
	if !refused {
		return nil
	}
	for i := range codes {
		if codes[i] == 0 {
			codes[i] = kerr.OperationNotAttempted.Code
		}
	}
	return codes
}

// addOne runs one transaction of the request and returns a code per
// partition of parts.
func addOne(ctx context.Context, td *TxnPlaneDeps, version int16, id string, pid int64, epoch int16, verifyOnly bool, parts []kafka.TopicPartition, writable func(string) bool) []int16 {
	if codes := checkPartitions(td.image(), parts, version < 4, writable); codes != nil {
		return codes
	}
	if verifyOnly {
		return td.Coordinator.Verify(ctx, txn.VerifyRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch, Partitions: parts})
	}
	cv := txn.TV0
	if version > 4 {
		cv = txn.TV2
	}
	code := td.Coordinator.AddPartitions(ctx, txn.AddPartitionsRequest{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch,
		Partitions: parts, ClientTransactionVersion: cv})
	code = txn.ErrorForVersion(kmsg.AddPartitionsToTxn, version, code)
	codes := make([]int16, len(parts))
	for i := range codes {
		codes[i] = code
	}
	return codes
}

// addPartitionsV3Error answers every partition of a v0-3 request code.
func addPartitionsV3Error(req *kmsg.AddPartitionsToTxnRequest, code int16) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.SetVersion(req.Version)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

func addPartitionsV3(ctx context.Context, td *TxnPlaneDeps, req *kmsg.AddPartitionsToTxnRequest, writable func(string) bool) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.SetVersion(req.Version)
	var tps txnPartitions
	for _, t := range req.Topics {
		tps.topics, tps.parts = append(tps.topics, t.Topic), append(tps.parts, t.Partitions)
	}
	codes := addOne(ctx, td, req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, false, tps.list(), writable)
	k := 0
	for i, t := range tps.topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t
		for _, p := range tps.parts[i] {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[k]
			k++
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// addPartitionsV4 runs the request's transactions concurrently, as Kafka
// answers once all have.
func addPartitionsV4(ctx context.Context, td *TxnPlaneDeps, req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.SetVersion(req.Version)
	results := make([]kmsg.AddPartitionsToTxnResponseTransaction, len(req.Transactions))
	var wg sync.WaitGroup
	for i, t := range req.Transactions {
		wg.Go(func() { results[i] = addTransactionV4(ctx, td, req.Version, t) })
	}
	wg.Wait()
	resp.Transactions = results
	return resp
}

func addTransactionV4(ctx context.Context, td *TxnPlaneDeps, version int16, t kmsg.AddPartitionsToTxnRequestTransaction) kmsg.AddPartitionsToTxnResponseTransaction {
	var tps txnPartitions
	for _, topic := range t.Topics {
		tps.topics, tps.parts = append(tps.topics, topic.Topic), append(tps.parts, topic.Partitions)
	}
	codes := addOne(ctx, td, version, t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.VerifyOnly, tps.list(), allowAll)
	rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
	rt.TransactionalID = t.TransactionalID
	k := 0
	for i, topic := range tps.topics {
		rtt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		rtt.Topic = topic
		for _, p := range tps.parts[i] {
			rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[k]
			k++
			rtt.Partitions = append(rtt.Partitions, rp)
		}
		rt.Topics = append(rt.Topics, rtt)
	}
	return rt
}
