package api

// AlterPartition (key 56), versions 0-3: served on the CONTROLLER listener
// only, as in Kafka: a partition leader asks the active controller to
// shrink or expand its ISR (KIP-497; v3 carries the members' broker epochs,
// KIP-903). The controller checks the broker epoch, leader epoch and
// partition epoch, so a stale leader's request is refused
// (STALE_BROKER_EPOCH, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION); a node
// that is not the active controller answers NOT_CONTROLLER.
//
// Deviations: LeaderRecoveryState RECOVERING is refused (INVALID_REQUEST):
// Sluice never elects uncleanly into a recovering state.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// newAlterPartitionHandler serves AlterPartition on CONTROLLER listeners:
// the active controller computes and commits the change; any other node
// fails with an error wrapping ErrNotController.
func newAlterPartitionHandler(b BrokerControl) Handler {
	return Handler{
		Key:        56,
		MinVersion: 0,
		MaxVersion: 3,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AlterPartitionRequest)
			resp, err := (*kmsg.AlterPartitionResponse)(nil), req.clusterRefusal(opClusterAction) // Kafka: CLUSTER_ACTION
			if err == nil {
				resp, err = b.AlterPartition(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrAlterPartitionResponse()
				resp.ErrorCode = ControllerErrorCode(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
