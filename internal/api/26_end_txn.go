package api

// EndTxn (key 26), versions 0-5: the pinned Kafka release's range.
//
// Commits or aborts the producer's transaction: the answer comes once
// PrepareCommit or PrepareAbort is durable in __transaction_state; the
// coordinator then writes the markers to every partition and completes
// the transaction. v5 speaks Transactions V2 (KIP-890): every EndTxn bumps
// the producer epoch and the answer carries the producer id and epoch to
// use next (a new producer id once the epochs are exhausted); a retry is
// recognised by its epoch. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before
// v2. Authorization as Kafka's: WRITE on the transactional id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
)

func newEndTxnHandler(td *TxnPlaneDeps) Handler {
	return Handler{
		Key: 26, MinVersion: 0, MaxVersion: 5,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.EndTxnRequest)
			resp := kmsg.NewPtrEndTxnResponse()
			resp.SetVersion(body.Version)
			if !req.authorize(opWrite, resTxnID, body.TransactionalID) { // Kafka: WRITE on the id
				resp.ErrorCode, resp.ProducerID, resp.ProducerEpoch = kerr.TransactionalIDAuthorizationFailed.Code, -1, -1
				return Reply(resp)
			}
			res := td.Coordinator.EndTxn(ctx, txn.EndTxnRequest{
				TransactionalID: body.TransactionalID, ProducerID: body.ProducerID, ProducerEpoch: body.ProducerEpoch,
				Commit: body.Commit, ClientTransactionVersion: txn.EndTxnClientVersion(body.Version),
			})
			resp.ErrorCode = txn.ErrorForVersion(kmsg.EndTxn, body.Version, res.ErrorCode)
			resp.ProducerID, resp.ProducerEpoch = res.ProducerID, res.ProducerEpoch
			return Reply(resp)
		},
	}
}
