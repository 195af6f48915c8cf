package api

// AddOffsetsToTxn (key 25), versions 0-4: the pinned Kafka release's range.
//
// Adds the group's __consumer_offsets partition to the producer's
// transaction, as AddPartitionsToTxn does, so that its TxnOffsetCommit is
// committed or aborted with the transaction. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2. Authorization as Kafka's: WRITE on the
// transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), then READ on
// the group (GROUP_AUTHORIZATION_FAILED).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
)

func newAddOffsetsToTxnHandler(td *TxnPlaneDeps) Handler {
	return Handler{
		Key: 25, MinVersion: 0, MaxVersion: 4,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AddOffsetsToTxnRequest)
			resp := kmsg.NewPtrAddOffsetsToTxnResponse()
			resp.SetVersion(body.Version)
			// Kafka: WRITE on the transactional id, READ on the group.
			switch {
			case !req.authorize(opWrite, resTxnID, body.TransactionalID):
				resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
				return Reply(resp)
			case !req.authorize(opRead, resGroup, body.Group):
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				return Reply(resp)
			}
			code := td.Coordinator.AddOffsets(ctx, txn.AddOffsetsRequest{TransactionalID: body.TransactionalID,
				ProducerID: body.ProducerID, ProducerEpoch: body.ProducerEpoch, GroupID: body.Group})
			resp.ErrorCode = txn.ErrorForVersion(kmsg.AddOffsetsToTxn, body.Version, code)
			return Reply(resp)
		},
	}
}
