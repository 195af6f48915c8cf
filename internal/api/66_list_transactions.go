package api

// ListTransactions (key 66), versions 0-2: the pinned Kafka release's
// range.
//
// Lists the transactions of every __transaction_state partition this
// broker coordinates, filtered as Kafka filters them: by state names
// (names Kafka does not know are returned in UnknownStateFilters and
// match nothing), by producer ids, from v1 by duration (transactions
// started more than DurationFilterMillis ago; -1 does not filter), and
// from v2 by a transactional id pattern (KIP-1152: a regular expression
// the whole id must match; an invalid one is INVALID_REGULAR_EXPRESSION).
// While a partition loads the answer is COORDINATOR_LOAD_IN_PROGRESS.
// Only ids the principal may DESCRIBE are listed, as in Kafka.
// Deviation: the pattern is Go's RE2 syntax, not Java's.

import (
	"context"
	"regexp"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/txn"
)

func newListTransactionsHandler(td *TxnPlaneDeps) Handler {
	return Handler{
		Key: 66, MinVersion: 0, MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			resp := listTransactions(ctx, td.Coordinator, req.Body.(*kmsg.ListTransactionsRequest))
			// Kafka lists only the ids the principal may DESCRIBE.
			resp.TransactionStates = slices.DeleteFunc(resp.TransactionStates, func(s kmsg.ListTransactionsResponseTransactionState) bool {
				return !req.authorize(opDescribe, resTxnID, s.TransactionalID)
			})
			return Reply(resp)
		},
	}
}

func listTransactions(ctx context.Context, tp TxnPlane, req *kmsg.ListTransactionsRequest) *kmsg.ListTransactionsResponse {
	resp := kmsg.NewPtrListTransactionsResponse()
	resp.SetVersion(req.Version)
	f := txn.ListFilter{States: req.StateFilters, ProducerIDs: req.ProducerIDFilters, DurationMs: -1}
	if req.Version >= 1 {
		f.DurationMs = req.DurationFilterMillis
	}
	if req.Version >= 2 && req.TransactionalIDPattern != nil && *req.TransactionalIDPattern != "" {
		re, err := regexp.Compile(`^(?:` + *req.TransactionalIDPattern + `)$`)
		if err != nil {
			resp.ErrorCode = kerr.InvalidRegularExpression.Code
			return resp
		}
		f.MatchID = re.MatchString
	}
	listed, unknown, code := tp.ListTransactions(ctx, f)
	if resp.ErrorCode = code; code != 0 {
		return resp
	}
	resp.UnknownStateFilters = unknown
	for _, l := range listed {
		s := kmsg.NewListTransactionsResponseTransactionState()
		s.TransactionalID, s.ProducerID, s.TransactionState = l.TransactionalID, l.ProducerID, l.State.String()
		resp.TransactionStates = append(resp.TransactionStates, s)
	}
	return resp
}
