package api

// Produce (key 0), versions 0-13 advertised, 3-13 served: the pinned
// release advertises Produce from v0 (KAFKA-18659: librdkafka turns
// compression off otherwise) but refuses v0-v2, and so does Sluice, by
// closing the connection as Kafka 4's socket server does for a version it
// does not enable.
//
// Behaviour as Kafka's: acks must be 0, 1 or -1 (else INVALID_REQUIRED_ACKS
// on every partition); acks=0 gets no response, and a failed acks=0 append
// closes the connection, the only way the client can learn of it; acks=-1
// waits (in the purgatory) for the high watermark to pass the append, up to
// timeout_ms, and checks min.insync.replicas (NOT_ENOUGH_REPLICAS before,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND after). Unknown topics get
// UNKNOWN_TOPIC_OR_PARTITION (v13: UNKNOWN_TOPIC_ID), never auto-creation.
// Internal topics refuse clients other than "__admin_client" with
// INVALID_TOPIC_EXCEPTION. Batch validation is records.Validate's: KIP-467
// record errors with an error message (v8+), CORRUPT_MESSAGE, INVALID_RECORD,
// MESSAGE_TOO_LARGE, INVALID_TIMESTAMP. log_append_time is set for
// LogAppendTime topics, log_start_offset always.
//
// Transactions, as Kafka's: a request with transactional records but no
// transactional_id is refused whole with TRANSACTIONAL_ID_AUTHORIZATION_FAILED
// (Kafka's authorizer check, which fails a null id); the replica manager
// verifies a producer's first transactional batch on each partition with
// the transaction coordinator (KIP-890; Produce v12+ adds the partition
// under TV2) and answers what Kafka does: INVALID_TXN_STATE ("Partition was
// not added to the transaction"), INVALID_PRODUCER_EPOCH for a fenced
// producer, TRANSACTION_ABORTABLE from v11 (INVALID_TXN_STATE before),
// NOT_ENOUGH_REPLICAS when the coordinator could not answer, and
// INVALID_PRODUCER_ID_MAPPING for transactional records of two producers.
//
// Authorization as Kafka's: transactional records need WRITE on the
// transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for the
// request), each topic WRITE (else TOPIC_AUTHORIZATION_FAILED, before its
// existence is checked; a v13 topic id is resolved first, UNKNOWN_TOPIC_ID).
//
// Client quotas (producer_byte_rate, request_percentage, KIP-219 muting):
// quota_hooks.go.
//
// KIP-951 (v10+), as Kafka: a partition answered NOT_LEADER_OR_FOLLOWER
// carries CurrentLeader (leader id and epoch from this broker's metadata
// image) and the response lists the NodeEndpoints of the leaders so named
// that are live on the request's listener (current_leader.go). Sluice lists
// them ordered by node id.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/replication"
)

// produceMinServedVersion is the first Produce version Kafka 4 accepts.
const produceMinServedVersion = 3

// adminClientID may write to internal topics, as in Kafka.
const adminClientID = "__admin_client"

// newProduceHandler serves Produce on d's partitions; leaders (nil: none)
// names current leaders in KIP-951 answers.
func newProduceHandler(d *DataPlaneDeps, leaders MetadataView) Handler {
	dp := d.Partitions
	return Handler{
		Key:        0,
		MinVersion: 0,
		MaxVersion: 13,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.ProduceRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("produce: unexpected body %T", req.Body))
			}
			if body.Version < produceMinServedVersion {
				return CloseConnection(fmt.Errorf("produce v%d is not enabled (Kafka 4 refuses v0-v2)", body.Version))
			}
			// Authorization as KafkaApis.handleProduceRequest: WRITE on the
			// transactional id for transactional records, WRITE on each topic.
			if body.TransactionID != nil && hasTransactionalRecords(body) &&
				!req.authorize(opWrite, resTxnID, *body.TransactionID) {
				return Reply(produceErrorResponse(body, kerr.TransactionalIDAuthorizationFailed.Code))
			}
			authorized := func(topic string) bool { return req.authorize(opWrite, resTopic, topic) }
			resp := handleProduce(ctx, dp, body, req.Header.ClientIDString(), authorized)
			if out, ok := resp.Body().(*kmsg.ProduceResponse); ok {
				leaders := newCurrentLeaders(leaders, req.Conn.Listener)
				addProduceCurrentLeaders(out, &leaders)
			}
			return resp
		},
	}
}

// producePartitionRef remembers where a partition's answer goes.
type producePartitionRef struct {
	topic, partition int
}

func handleProduce(ctx context.Context, dp DataPlane, req *kmsg.ProduceRequest, clientID string, authorized func(string) bool) Response {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	if req.TransactionID == nil && hasTransactionalRecords(req) {
		return Reply(produceErrorResponse(req, kerr.TransactionalIDAuthorizationFailed.Code))
	}
	validAcks := req.Acks == 0 || req.Acks == 1 || req.Acks == -1
	var (
		appends []replication.AppendPartition
		refs    []producePartitionRef
		failed  bool
	)
	for ti, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name, topicErr := resolveProduceTopic(dp, req.Version, rt, clientID)
		if authName := produceAuthName(req.Version, rt, name); topicErr != kerr.UnknownTopicID && !authorized(authName) {
			topicErr = kerr.TopicAuthorizationFailed
		}
		for pi, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			switch {
			case topicErr == kerr.TopicAuthorizationFailed:
				sp.ErrorCode = topicErr.Code
			case !validAcks:
				sp.ErrorCode = kerr.InvalidRequiredAcks.Code
			case topicErr != nil:
				sp.ErrorCode = topicErr.Code
			default:
				appends = append(appends, replication.AppendPartition{
					TP: kafka.TopicPartition{Topic: name, Partition: rp.Partition}, Records: rp.Records})
				refs = append(refs, producePartitionRef{topic: ti, partition: pi})
			}
			if sp.ErrorCode != 0 {
				failed = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	if len(appends) > 0 {
		var txnID string
		if req.TransactionID != nil {
			txnID = *req.TransactionID
		}
		results := dp.AppendRecords(ctx, replication.AppendRequest{
			RequiredAcks:    req.Acks,
			Timeout:         time.Duration(req.TimeoutMillis) * time.Millisecond,
			ProduceVersion:  req.Version,
			TransactionalID: txnID,
			Partitions:      appends,
		})
		for i, res := range results {
			sp := &resp.Topics[refs[i].topic].Partitions[refs[i].partition]
			fillProducePartition(sp, res.AppendResult)
			if sp.ErrorCode != 0 {
				failed = true
			}
		}
	}
	if req.Acks == 0 {
		if failed {
			return CloseConnection(errors.New("produce with acks=0 failed; closing the connection so the client notices"))
		}
		return NoResponse()
	}
	return Reply(resp)
}

// hasTransactionalRecords is Kafka's RequestUtils.hasTransactionalRecords:
// whether the first batch of any partition is transactional.
func hasTransactionalRecords(req *kmsg.ProduceRequest) bool {
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			if h, err := records.ParseHeader(rp.Records); err == nil && h.IsTransactional() {
				return true
			}
		}
	}
	return false
}

// produceErrorResponse answers every partition with code, as Kafka's
// ProduceRequest.getErrorResponse does for a request refused whole.
func produceErrorResponse(req *kmsg.ProduceRequest, code int16) *kmsg.ProduceResponse {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewProduceResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		for _, rp := range rt.Partitions {
			sp := kmsg.NewProduceResponseTopicPartition()
			sp.Partition, sp.ErrorCode = rp.Partition, code
			sp.BaseOffset, sp.LogAppendTime, sp.LogStartOffset = -1, -1, -1
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// produceAuthName is the topic name Produce authorizes: the request's
// name before v13, the one its topic id resolved to from v13.
func produceAuthName(version int16, rt kmsg.ProduceRequestTopic, resolved string) string {
	if version >= 13 {
		return resolved
	}
	return rt.Topic
}

// resolveProduceTopic finds the topic's name (by id from v13) and refuses
// unknown and internal topics.
func resolveProduceTopic(dp DataPlane, version int16, rt kmsg.ProduceRequestTopic, clientID string) (string, *kerr.Error) {
	name := rt.Topic
	if version >= 13 {
		n, ok := dp.TopicName(kafka.UUID(rt.TopicID))
		if !ok {
			return "", kerr.UnknownTopicID
		}
		name = n
	} else if _, ok := dp.TopicID(name); !ok {
		return "", kerr.UnknownTopicOrPartition
	}
	if isInternalTopic(name) && clientID != adminClientID {
		return name, kerr.InvalidTopicException
	}
	return name, nil
}

func fillProducePartition(sp *kmsg.ProduceResponseTopicPartition, res replication.AppendResult) {
	sp.ErrorCode = errorCode(res.Err)
	sp.LogStartOffset = res.LogStartOffset
	if res.Err != nil {
		for _, re := range res.RecordErrors {
			er := kmsg.NewProduceResponseTopicPartitionErrorRecord()
			er.RelativeOffset = re.BatchIndex
			if re.Message != "" {
				msg := re.Message
				er.ErrorMessage = &msg
			}
			sp.ErrorRecords = append(sp.ErrorRecords, er)
		}
		if res.ErrorMessage != "" {
			msg := res.ErrorMessage
			sp.ErrorMessage = &msg
		}
		return
	}
	sp.BaseOffset = res.FirstOffset
	sp.LogAppendTime = res.LogAppendTimeMs
}

// addProduceCurrentLeaders fills in KIP-951's CurrentLeader for every
// partition answered NOT_LEADER_OR_FOLLOWER and the endpoints of the leaders
// named (v10+; older versions have neither field).
func addProduceCurrentLeaders(resp *kmsg.ProduceResponse, leaders *currentLeaders) {
	if resp.Version < 10 {
		return
	}
	for ti := range resp.Topics {
		rt := &resp.Topics[ti]
		for pi := range rt.Partitions {
			sp := &rt.Partitions[pi]
			if sp.ErrorCode != kerr.NotLeaderForPartition.Code {
				continue
			}
			name := rt.Topic
			if resp.Version >= 13 {
				// v13 answers name topics by id only.
				var ok bool
				if name, ok = leaders.topicName(kafka.UUID(rt.TopicID)); !ok {
					continue
				}
			}
			sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch = leaders.leaderOf(kafka.TopicPartition{Topic: name, Partition: sp.Partition})
		}
	}
	for _, ep := range leaders.nodeEndpoints() {
		ne := kmsg.NewProduceResponseBroker()
		ne.NodeID, ne.Host, ne.Port, ne.Rack = ep.NodeID, ep.Host, ep.Port, ep.Rack
		resp.Brokers = append(resp.Brokers, ne)
	}
}
