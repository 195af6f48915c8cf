package api

// InitProducerId (key 22), versions 0-5: the pinned Kafka release's range.
//
// Without a transactional id (an idempotent producer), as Kafka: every
// request gets a fresh producer id at epoch 0 from this broker's block of
// controller-allocated ids, including a KIP-360 request that names its
// current producer id and epoch (Kafka's transaction coordinator "blindly
// accepts" those and hands out a new id, since without a transactional id
// there is no state to fence).
//
// With a transactional id the transaction coordinator answers: a new id
// gets a producer id and epoch 0, a known one its epoch bumped (a new
// producer id once the epochs are exhausted), an ongoing transaction is
// fenced and aborted first (CONCURRENT_TRANSACTIONS until the abort
// completes), KIP-360 recovery from the producer id and epoch a v3+ client
// names, transaction.timeout.ms over transaction.max.timeout.ms is
// INVALID_TRANSACTION_TIMEOUT, an empty transactional id INVALID_REQUEST.
// PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v4, as Kafka answers
// clients that do not know it.
//
// A producer id without an epoch, or the reverse, is INVALID_REQUEST. A
// listener without the transaction coordinator (a dedicated controller)
// answers a transactional request COORDINATOR_NOT_AVAILABLE.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
)

// noProducerID and noProducerEpoch are Kafka's "none" values.
const (
	noProducerID    int64 = -1
	noProducerEpoch int16 = -1
)

func newInitProducerIDHandler(ids ProducerIDSource, txns *TxnPlaneDeps) Handler {
	return Handler{
		Key:        22,
		MinVersion: 0,
		MaxVersion: 5,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.InitProducerIDRequest)
			// Kafka: WRITE on the transactional id; without one
			// IDEMPOTENT_WRITE on the cluster or WRITE on any topic.
			if code := initProducerIDRefusal(req, body); code != 0 {
				resp := kmsg.NewPtrInitProducerIDResponse()
				resp.SetVersion(body.Version)
				resp.ProducerID, resp.ProducerEpoch, resp.ErrorCode = noProducerID, noProducerEpoch, code
				return Reply(resp)
			}
			if body.TransactionalID != nil {
				return Reply(initTransactionalProducerID(ctx, txns.txnCoordinator(), body))
			}
			return Reply(initProducerID(ctx, ids, body))
		},
	}
}

// initProducerIDRefusal is KafkaApis.handleInitProducerIdRequest's
// authorization: the refusal's code, or 0.
func initProducerIDRefusal(req *Request, body *kmsg.InitProducerIDRequest) int16 {
	if body.TransactionalID != nil {
		if !req.authorize(opWrite, resTxnID, *body.TransactionalID) {
			return kerr.TransactionalIDAuthorizationFailed.Code
		}
		return 0
	}
	if !req.authorizeCluster(opIdempotentWrite) && !req.authorizeByResourceType(opWrite, resTopic) {
		return kerr.ClusterAuthorizationFailed.Code
	}
	return 0
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

// initTransactionalProducerID serves a request with a transactional id;
// without a coordinator it answers as initProducerID does.
func initTransactionalProducerID(ctx context.Context, tp TxnPlane, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	if tp == nil {
		return initProducerID(ctx, nil, req)
	}
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.SetVersion(req.Version)
	producerID, epoch := noProducerID, noProducerEpoch
	if req.Version >= 3 {
		producerID, epoch = req.ProducerID, req.ProducerEpoch
	}
	res := tp.InitProducerID(ctx, txn.InitRequest{
		TransactionalID: *req.TransactionalID, TimeoutMs: req.TransactionTimeoutMillis,
		ProducerID: producerID, ProducerEpoch: epoch,
	})
	resp.ErrorCode = txn.ErrorForVersion(kmsg.InitProducerID, req.Version, res.ErrorCode)
	resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
	return resp
}
