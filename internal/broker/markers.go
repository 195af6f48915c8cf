package broker

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/groupcoord"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// DefaultMarkerTimeout bounds the wait for a marker's replication when the
// caller's context has no earlier deadline: Kafka's request.timeout.ms
// default, which its WriteTxnMarkers handler waits.
const DefaultMarkerTimeout = 30 * time.Second

// groupMetadataTopic is where transactional offset commits live.
const groupMetadataTopic = "__consumer_offsets"

// MarkerAppender appends transaction markers as leader;
// *replication.ReplicaManager implements it.
type MarkerAppender interface {
	AppendTxnMarkers(ctx context.Context, timeout time.Duration, markers []replication.TxnMarker) [][]replication.TxnMarkerResult
}

// TxnCompleter applies a transaction's result to the offsets it committed;
// *groupcoord.GroupCoordinator implements it.
type TxnCompleter interface {
	CompleteTransaction(ctx context.Context, producerID int64, partitions []int32, commit bool)
}

var (
	_ MarkerAppender = (*replication.ReplicaManager)(nil)
	_ TxnCompleter   = (*groupcoord.GroupCoordinator)(nil)
)

// MarkerWriter is the one path that writes transaction markers (Kafka's
// KafkaApis.handleWriteTxnMarkersRequest): the WriteTxnMarkers handler
// calls it for remote coordinators, and the transaction coordinator calls
// it directly for partitions this broker leads. It holds no goroutine.
type MarkerWriter struct {
	replicas MarkerAppender
	groups   TxnCompleter
}

// NewMarkerWriter writes markers through replicas and tells groups (nil:
// no group coordinator on this broker) the result of transactions whose
// marker reached __consumer_offsets partitions.
func NewMarkerWriter(replicas MarkerAppender, groups TxnCompleter) *MarkerWriter {
	return &MarkerWriter{replicas: replicas, groups: groups}
}

// WriteTxnMarkers appends each marker's COMMIT or ABORT control batch to
// its partitions as their leader with the coordinator's epoch and answers,
// per marker and partition, once the high watermark has passed each marker
// or DefaultMarkerTimeout (or ctx's deadline) passed: Kafka's codes
// (UNKNOWN_TOPIC_OR_PARTITION for a partition this broker has no replica
// of, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, INVALID_PRODUCER_EPOCH,
// TRANSACTION_COORDINATOR_FENCED, REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR).
// For the __consumer_offsets partitions written, the group coordinator
// then commits or drops the transaction's pending offsets, before the
// answer. The response's version is req's.
func (w *MarkerWriter) WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse {
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.SetVersion(req.Version)
	markers := make([]replication.TxnMarker, len(req.Markers))
	for i, m := range req.Markers {
		markers[i] = replication.TxnMarker{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Commit: m.Committed,
			CoordinatorEpoch: m.CoordinatorEpoch, TransactionVersion: int16(m.TransactionVersion)}
		for _, t := range m.Topics {
			for _, p := range t.Partitions {
				markers[i].Partitions = append(markers[i].Partitions, kafka.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
	}
	results := w.replicas.AppendTxnMarkers(ctx, markerTimeout(ctx), markers)
	for i, m := range req.Markers {
		w.completeGroupOffsets(ctx, markers[i], results[i])
		resp.Markers = append(resp.Markers, markerResponse(m, results[i]))
	}
	return resp
}

// markerTimeout is the acks wait: DefaultMarkerTimeout, or less when ctx
// ends sooner.
func markerTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(min(time.Until(d), DefaultMarkerTimeout), time.Millisecond)
	}
	return DefaultMarkerTimeout
}

// completeGroupOffsets tells the group coordinator the transaction's result
// for the __consumer_offsets partitions whose marker is durable.
func (w *MarkerWriter) completeGroupOffsets(ctx context.Context, m replication.TxnMarker, results []replication.TxnMarkerResult) {
	if w.groups == nil {
		return
	}
	var parts []int32
	for _, r := range results {
		if r.Err == nil && r.TP.Topic == groupMetadataTopic {
			parts = append(parts, r.TP.Partition)
		}
	}
	if len(parts) > 0 {
		w.groups.CompleteTransaction(ctx, m.ProducerID, parts, m.Commit)
	}
}

// markerResponse answers one marker, its topics and partitions in request
// order.
func markerResponse(m kmsg.WriteTxnMarkersRequestMarker, results []replication.TxnMarkerResult) kmsg.WriteTxnMarkersResponseMarker {
	rm := kmsg.NewWriteTxnMarkersResponseMarker()
	rm.ProducerID = m.ProducerID
	i := 0
	for _, t := range m.Topics {
		rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
			rp.Partition, rp.ErrorCode = p, replication.ErrorCode(results[i].Err)
			rt.Partitions = append(rt.Partitions, rp)
			i++
		}
		rm.Topics = append(rm.Topics, rt)
	}
	return rm
}
