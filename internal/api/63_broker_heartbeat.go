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
// Offline log dirs (v1, KIP-858) as Kafka's handleDirectoriesOffline: the
// replicas assigned to a newly offline dir of the broker leave their ISR
// and their leadership moves (controller.HandleDirectoriesOffline), once
// directory assignment is on (metadata.DirectoryAssignment); a broker whose
// last dir or metadata log dir fails halts instead, as Kafka's does.
//
// Deviations: offline dirs are acted on only in a heartbeat that neither
// fences, unfences nor shuts the broker down (the next one carries them
// again). A controlled shutdown is answered ShouldShutdown at once, with leadership
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
