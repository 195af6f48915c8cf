package api

// AssignReplicasToDirs (key 73), version 0: served on the CONTROLLER
// listener only, as in Kafka (KIP-858). A broker tells the active controller
// which log dir holds each of its replicas; the controller records it in the
// partition's Directories (controller.AssignReplicasToDirs).
//
// Behaviour as Kafka's controller: CLUSTER_ACTION is required; per
// partition UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION or
// NOT_LEADER_OR_FOLLOWER; BROKER_ID_NOT_REGISTERED, STALE_BROKER_EPOCH and
// UNSUPPORTED_VERSION (directory assignment off) fail the request; a node
// that is not the active controller answers NOT_CONTROLLER.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newAssignReplicasToDirsHandler(a BrokerControl) Handler {
	return Handler{
		Key:        73,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AssignReplicasToDirsRequest)
			resp, err := (*kmsg.AssignReplicasToDirsResponse)(nil), req.clusterRefusal(opClusterAction) // Kafka: CLUSTER_ACTION
			if err == nil {
				resp, err = a.AssignReplicasToDirs(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrAssignReplicasToDirsResponse()
				resp.ErrorCode = ControllerErrorCode(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
