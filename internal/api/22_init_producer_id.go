package api

// InitProducerId (key 22), versions 0-5: the pinned Kafka release's range.
//
// Behaviour as Kafka's for idempotent producers (no transactional id): every
// request gets a fresh producer id at epoch 0 from this broker's block of
// controller-allocated ids, including a KIP-360 request that names its
// current producer id and epoch (Kafka's transaction coordinator "blindly
// accepts" those and hands out a new id, since without a transactional id
// there is no state to fence). A producer id without an epoch, or the
// reverse, is INVALID_REQUEST.
//
// Deviations: transactions are not built, so a request with a transactional
// id gets COORDINATOR_NOT_AVAILABLE, what Kafka answers while its transaction
// coordinator cannot serve (the transaction log not available). See
// docs/compatibility.md for what the Java producer does with it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// noProducerID and noProducerEpoch are Kafka's "none" values.
const (
	noProducerID    int64 = -1
	noProducerEpoch int16 = -1
)

func newInitProducerIDHandler(ids ProducerIDSource) Handler {
	return Handler{
		Key:        22,
		MinVersion: 0,
		MaxVersion: 5,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.InitProducerIDRequest)
			return Reply(initProducerID(ctx, ids, body))
		},
	}
}

func initProducerID(ctx context.Context, ids ProducerIDSource, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.SetVersion(req.Version)
	resp.ProducerID, resp.ProducerEpoch = noProducerID, noProducerEpoch
	if req.Version >= 3 && (req.ProducerID == noProducerID) != (req.ProducerEpoch == noProducerEpoch) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp
	}
	if req.TransactionalID != nil {
		if *req.TransactionalID == "" {
			resp.ErrorCode = kerr.InvalidRequest.Code
		} else {
			resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		}
		return resp
	}
	id, err := ids.NextProducerID(ctx)
	if err != nil {
		resp.ErrorCode = ControllerErrorCode(err)
		return resp
	}
	resp.ProducerID, resp.ProducerEpoch = id, 0
	return resp
}
