package api

// UnregisterBroker (key 64), version 0: the pinned Kafka release's range.
//
// Behaviour as Kafka's: the active controller removes the broker's
// registration; the broker first leaves every ISR (where it is not the
// last member) and every leadership it holds. An id that is not registered
// is BROKER_ID_NOT_REGISTERED ("Broker ID N is not currently registered").
// Replica assignments are left as they are (`sluice broker decommission`
// moves them off first). A broker listener forwards the request to the
// active controller, as Kafka's brokers do.
//
// Authorization: ALTER on the cluster, as Kafka's controller.
//
// Deviation: a Sluice broker that is still running when it is unregistered
// registers again at its next heartbeat (Kafka's keeps failing its
// heartbeats); stop it first, as Kafka's documentation asks.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerUnregistrar is the active controller's UnregisterBroker, reached
// locally or forwarded (*broker.ControllerChannel).
type BrokerUnregistrar interface {
	UnregisterBroker(ctx context.Context, req *kmsg.UnregisterBrokerRequest) (*kmsg.UnregisterBrokerResponse, error)
}

// newUnregisterBrokerHandler serves key 64 through the active controller.
// admin is the node's *broker.ControllerChannel, which implements
// BrokerUnregistrar; an admin that does not fails the request
// (UNSUPPORTED_VERSION) rather than pretend.
func newUnregisterBrokerHandler(admin AdminController) Handler {
	return Handler{
		Key:        64,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.UnregisterBrokerRequest)
			resp, err := (*kmsg.UnregisterBrokerResponse)(nil), req.clusterRefusal(opAlter)
			if err == nil {
				u, ok := unregistrar(admin)
				if !ok {
					err = kerr.UnsupportedVersion
				} else {
					resp, err = u.UnregisterBroker(ctx, body)
				}
			}
			if err != nil {
				resp = kmsg.NewPtrUnregisterBrokerResponse()
				resp.ErrorCode, resp.ErrorMessage = ControllerErrorCode(err), errorMessage(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// unregistrar finds the BrokerUnregistrar behind admin: the controller
// mutation quota's wrapper (quota_hooks.go) embeds the AdminController
// interface, which hides the channel's other methods.
func unregistrar(admin AdminController) (BrokerUnregistrar, bool) {
	if q, ok := admin.(mutationQuotaAdmin); ok {
		admin = q.AdminController
	}
	u, ok := admin.(BrokerUnregistrar)
	return u, ok
}
