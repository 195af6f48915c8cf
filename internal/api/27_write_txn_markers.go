package api

// WriteTxnMarkers (key 27), versions 1-2: the pinned release's range (v0 is
// gone since KIP-896). Transaction coordinators send it to the leaders of
// a transaction's partitions over the inter-broker listener.
//
// Behaviour as Kafka's handleWriteTxnMarkersRequest, through the broker's
// marker writer (broker.MarkerWriter, the one path that writes markers, the
// local coordinator's included): each marker's COMMIT or ABORT control
// batch is appended to its partitions as their leader with the
// coordinator's epoch, and the answer waits until the high watermark has
// passed every marker (acks=all, bounded by request.timeout.ms). Errors per
// marker and partition: UNKNOWN_TOPIC_OR_PARTITION for a partition this
// broker has no replica of, NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS,
// INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED for a coordinator
// epoch older than the partition's last marker of the producer,
// REQUEST_TIMED_OUT, KAFKA_STORAGE_ERROR. For partitions of
// __consumer_offsets written, the group coordinator applies the
// transaction's offsets. v2's transaction_version 2 (KIP-890) makes the
// partition check that the marker's epoch was bumped.
//
// Authorization as Kafka's: ALTER or CLUSTER_ACTION on the cluster (the
// brokers' principals must be super users or granted it), else
// CLUSTER_AUTHORIZATION_FAILED on every partition. The API is registered only when the broker is given a marker
// writer (transactions wired).

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TxnMarkerWriter writes transaction markers as this broker's partitions'
// leader (DataPlaneDeps.Markers); *broker.MarkerWriter implements it.
type TxnMarkerWriter interface {
	WriteTxnMarkers(ctx context.Context, req *kmsg.WriteTxnMarkersRequest) *kmsg.WriteTxnMarkersResponse
}

func newWriteTxnMarkersHandler(w TxnMarkerWriter) Handler {
	return Handler{
		Key: 27, MinVersion: 1, MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.WriteTxnMarkersRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("write txn markers: unexpected body %T", req.Body))
			}
			// Kafka: ALTER or CLUSTER_ACTION on the cluster; refused, every
			// partition answers CLUSTER_AUTHORIZATION_FAILED.
			if !req.authorizeCluster(opAlter) && !req.authorizeCluster(opClusterAction) {
				return Reply(writeTxnMarkersError(body, kerr.ClusterAuthorizationFailed.Code))
			}
			resp := w.WriteTxnMarkers(ctx, body)
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// writeTxnMarkersError is Kafka's WriteTxnMarkersRequest.getErrorResponse:
// the code on every partition of every marker.
func writeTxnMarkersError(req *kmsg.WriteTxnMarkersRequest, code int16) *kmsg.WriteTxnMarkersResponse {
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.SetVersion(req.Version)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition, rp.ErrorCode = p, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp
}
