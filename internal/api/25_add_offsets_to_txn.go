package api

// AddOffsetsToTxn (key 25), versions 0-4: the pinned Kafka release's range.
//
// Adds the group's __consumer_offsets partition to the producer's
// transaction, as AddPartitionsToTxn does, so that its TxnOffsetCommit is
// committed or aborted with the transaction. PRODUCER_FENCED is
// INVALID_PRODUCER_EPOCH before v2. Deviation: no authorization (Kafka
// checks WRITE on the transactional id and READ on the group).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/coordinator/txn"
)

func newAddOffsetsToTxnHandler(td *TxnPlaneDeps) Handler {
	return Handler{
		Key: 25, MinVersion: 0, MaxVersion: 4,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AddOffsetsToTxnRequest)
			resp := kmsg.NewPtrAddOffsetsToTxnResponse()
			resp.SetVersion(body.Version)
			code := td.Coordinator.AddOffsets(ctx, txn.AddOffsetsRequest{TransactionalID: body.TransactionalID,
				ProducerID: body.ProducerID, ProducerEpoch: body.ProducerEpoch, GroupID: body.Group})
			resp.ErrorCode = txn.ErrorForVersion(kmsg.AddOffsetsToTxn, body.Version, code)
			return Reply(resp)
		},
	}
}
