package api

// AllocateProducerIds (key 67), version 0: served on the CONTROLLER
// listener only (ControllerListenerRelease), as in Kafka: a broker asks the
// active controller for a block of producer ids, which the controller
// commits to the metadata log before answering.
//
// Behaviour as Kafka's controller: blocks of 1000 ids; an unregistered
// broker gets BROKER_ID_NOT_REGISTERED and a stale broker epoch
// STALE_BROKER_EPOCH; a node that is not the active controller answers
// NOT_CONTROLLER.
//
// Deviations: none known.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newAllocateProducerIDsHandler(b BrokerControl) Handler {
	return Handler{
		Key:        67,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AllocateProducerIDsRequest)
			resp, err := (*kmsg.AllocateProducerIDsResponse)(nil), req.clusterRefusal(opClusterAction) // Kafka: CLUSTER_ACTION
			if err == nil {
				resp, err = b.AllocateProducerIDs(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrAllocateProducerIDsResponse()
				resp.ErrorCode = ControllerErrorCode(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
