package api

// AlterPartitionReassignments (key 45), versions 0-1: the pinned Kafka
// release's range (kmsg calls it AlterPartitionAssignments).
//
// Behaviour as Kafka's (KIP-455): the active controller grows each listed
// partition's replicas to the union of the current and the target ones; the
// new replicas fetch, join the ISR through the leader's AlterPartition, and
// the change that adds the last of them completes the move (replicas become
// the target, the removed ones leave the ISR, a removed leader is
// replaced). Null replicas cancel a reassignment in progress
// (NO_REASSIGNMENT_IN_PROGRESS without one). Per-partition errors
// UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (empty list,
// duplicate or unregistered broker, every broker fenced) and, from v1 when
// allow_replication_factor_change is false, INVALID_REPLICATION_FACTOR. A
// broker forwards the request to the active controller; the answer is sent
// once the change is committed, not when the move completes.
//
// Authorization: ALTER on the cluster, as Kafka's controller.
//
// Deviations: no replication throttles (Kafka's tools set them through configs, which
// are stored but not enforced).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newAlterPartitionReassignmentsHandler(admin AdminController) Handler {
	return Handler{
		Key:        45,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AlterPartitionAssignmentsRequest)
			return Reply(alterPartitionReassignments(ctx, admin, body, req.clusterRefusal(opAlter)))
		},
	}
}

// alterPartitionReassignments answers req; refusal is the authorization
// error (ALTER on the cluster), answered as a request failed whole.
func alterPartitionReassignments(ctx context.Context, admin AdminController, req *kmsg.AlterPartitionAssignmentsRequest, refusal error) *kmsg.AlterPartitionAssignmentsResponse {
	ctx, cancel := requestTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	resp, err := (*kmsg.AlterPartitionAssignmentsResponse)(nil), refusal
	if err == nil {
		resp, err = admin.AlterPartitionReassignments(ctx, req)
	}
	if err != nil {
		// Kafka answers a request that failed as a whole with the
		// top-level error and no partitions.
		resp = kmsg.NewPtrAlterPartitionAssignmentsResponse()
		resp.ErrorCode, resp.ErrorMessage = ControllerErrorCode(err), errorMessage(err)
		resp.AllowReplicationFactorChange = req.Version < 1 || req.AllowReplicationFactorChange
		if refusal != nil {
			// An authorization refusal is Kafka's getErrorResponse: the
			// code on every partition too.
			resp.Topics = reassignmentsRefused(req, resp.ErrorCode, resp.ErrorMessage)
		}
	}
	resp.SetVersion(req.Version)
	return resp
}

func reassignmentsRefused(req *kmsg.AlterPartitionAssignmentsRequest, code int16, msg *string) []kmsg.AlterPartitionAssignmentsResponseTopic {
	var out []kmsg.AlterPartitionAssignmentsResponseTopic
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}
