package api

// BrokerHeartbeat (key 63), versions 0-1: served on the CONTROLLER listener
// only (ControllerListenerRelease), as in Kafka.
//
// Behaviour as Kafka's controller: the heartbeat keeps the broker's session;
// a fenced broker whose metadata offset reached its registration is
// unfenced; WantFence fences; WantShutdown moves leadership away and
// answers ShouldShutdown; an unknown broker gets BROKER_ID_NOT_REGISTERED
// and a stale epoch STALE_BROKER_EPOCH; a node that is not the active
// controller answers NOT_CONTROLLER.
//
// Deviations: offline log dirs (v1) are ignored: Sluice's metadata records
// carry no directory assignment (KIP-858's PartitionRecord Directories), so
// the controller cannot tell which partitions a dir held, and Sluice's
// brokers do not send them (a broker halts instead when a dir failure
// leaves it no online dir or takes its metadata log dir, as Kafka's does,
// and is fenced; with another dir online it keeps its leadership). A
// controlled shutdown is answered ShouldShutdown at once, with leadership
// already moved (Kafka waits for the broker's replicas to leave the ISR
// over several heartbeats).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newBrokerHeartbeatHandler(b BrokerControl) Handler {
	return Handler{
		Key:        63,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.BrokerHeartbeatRequest)
			resp, err := (*kmsg.BrokerHeartbeatResponse)(nil), req.clusterRefusal(opClusterAction) // Kafka: CLUSTER_ACTION
			if err == nil {
				resp, err = b.BrokerHeartbeat(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrBrokerHeartbeatResponse()
				resp.ErrorCode = ControllerErrorCode(err)
				resp.IsFenced = true
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
