package api

// DescribeTransactions (key 65), version 0: the pinned Kafka release's
// range.
//
// Describes each transactional id this broker coordinates: its state (by
// Kafka's name), producer id and epoch, timeout, start time and partitions
// (grouped by topic, sorted). An id coordinated elsewhere answers
// NOT_COORDINATOR, one loading COORDINATOR_LOAD_IN_PROGRESS, an unknown or
// expiring one TRANSACTIONAL_ID_NOT_FOUND, an empty one INVALID_REQUEST.
// Authorization as Kafka's: DESCRIBE on each id (else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and only the topics the principal
// may DESCRIBE are listed.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newDescribeTransactionsHandler(td *TxnPlaneDeps) Handler {
	return Handler{
		Key: 65, MinVersion: 0, MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeTransactionsRequest)
			resp := kmsg.NewPtrDescribeTransactionsResponse()
			resp.SetVersion(body.Version)
			describable := req.topicCheck(opDescribe)
			for _, id := range body.TransactionalIDs {
				// Kafka: DESCRIBE on the id, and only the topics the
				// principal may DESCRIBE.
				if !req.authorize(opDescribe, resTxnID, id) {
					s := kmsg.NewDescribeTransactionsResponseTransactionState()
					s.TransactionalID, s.ErrorCode = id, kerr.TransactionalIDAuthorizationFailed.Code
					resp.TransactionStates = append(resp.TransactionStates, s)
					continue
				}
				s := describeTransaction(ctx, td.Coordinator, id)
				s.Topics = slices.DeleteFunc(s.Topics, func(t kmsg.DescribeTransactionsResponseTransactionStateTopic) bool {
					return !describable(t.Topic)
				})
				resp.TransactionStates = append(resp.TransactionStates, s)
			}
			return Reply(resp)
		},
	}
}

func describeTransaction(ctx context.Context, tp TxnPlane, id string) kmsg.DescribeTransactionsResponseTransactionState {
	s := kmsg.NewDescribeTransactionsResponseTransactionState()
	s.TransactionalID = id
	d := tp.DescribeTransaction(ctx, id)
	if s.ErrorCode = d.ErrorCode; d.ErrorCode != 0 {
		return s
	}
	s.State, s.TimeoutMillis, s.StartTimestamp = d.State.String(), d.TimeoutMs, d.StartTimestamp
	s.ProducerID, s.ProducerEpoch = d.ProducerID, d.ProducerEpoch
	for _, tp := range d.Partitions {
		if n := len(s.Topics); n == 0 || s.Topics[n-1].Topic != tp.Topic {
			t := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
			t.Topic = tp.Topic
			s.Topics = append(s.Topics, t)
		}
		last := &s.Topics[len(s.Topics)-1]
		last.Partitions = append(last.Partitions, tp.Partition)
	}
	return s
}
