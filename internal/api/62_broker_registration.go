package api

// BrokerRegistration (key 62), versions 0-4: served on the CONTROLLER
// listener only (ControllerListenerRelease), as in Kafka.
//
// Behaviour as Kafka's controller: a broker registers fenced with a new
// epoch; a live registration of another incarnation is refused
// (DUPLICATE_BROKER_REGISTRATION); a node that is not the active controller
// answers NOT_CONTROLLER.
//
// Log dirs (v2+, KIP-858) are recorded and checked as Kafka's (none,
// reserved, duplicate or another broker's: INVALID_REGISTRATION) once
// directory assignment is on; before, they are ignored.
//
// Deviations: features and the previous broker epoch (v3-4) are not
// checked.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newBrokerRegistrationHandler(b BrokerControl) Handler {
	return Handler{
		Key:        62,
		MinVersion: 0,
		MaxVersion: 4,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.BrokerRegistrationRequest)
			resp, err := (*kmsg.BrokerRegistrationResponse)(nil), req.clusterRefusal(opClusterAction) // Kafka: CLUSTER_ACTION
			if err == nil {
				resp, err = b.BrokerRegistration(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrBrokerRegistrationResponse()
				resp.ErrorCode = ControllerErrorCode(err)
				resp.BrokerEpoch = -1
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
