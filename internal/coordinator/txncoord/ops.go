package txncoord

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
)

// maxIDRounds bounds how often an operation runs again with a fresh
// producer id: the state machine takes the one it asked for, so a second
// request only follows a change of state in between.
const maxIDRounds = 3

// InitProducerID serves an InitProducerId with a transactional id. It
// answers once the new producer epoch is durable.
func (c *TransactionCoordinator) InitProducerID(ctx context.Context, req txn.InitRequest) txn.InitResult {
	for range maxIDRounds {
		res, code := call(ctx, c, req.TransactionalID, func(now time.Time, m *txn.Manager, reply func(txn.InitResult)) {
			m.InitProducerID(now, req, reply)
		})
		if code != 0 {
			return txn.InitResult{ErrorCode: code, ProducerID: -1, ProducerEpoch: -1}
		}
		if !res.NeedProducerID {
			return res
		}
		id, err := c.opts.ProducerIDs.NextProducerID(ctx)
		if err != nil {
			return txn.InitResult{ErrorCode: producerIDErrorCode(err), ProducerID: -1, ProducerEpoch: -1}
		}
		req.FreshProducerID = &id
	}
	return txn.InitResult{ErrorCode: kerr.ConcurrentTransactions.Code, ProducerID: -1, ProducerEpoch: -1}
}

// EndTxn serves an EndTxn: it answers once PrepareCommit or PrepareAbort
// is durable; the markers follow through the marker channel.
func (c *TransactionCoordinator) EndTxn(ctx context.Context, req txn.EndTxnRequest) txn.EndTxnResult {
	for range maxIDRounds {
		res, code := call(ctx, c, req.TransactionalID, func(now time.Time, m *txn.Manager, reply func(txn.EndTxnResult)) {
			m.EndTxn(now, req, reply)
		})
		if code != 0 {
			return txn.EndTxnResult{ErrorCode: code, ProducerID: -1, ProducerEpoch: -1}
		}
		if !res.NeedProducerID {
			return res
		}
		id, err := c.opts.ProducerIDs.NextProducerID(ctx)
		if err != nil {
			return txn.EndTxnResult{ErrorCode: producerIDErrorCode(err), ProducerID: -1, ProducerEpoch: -1}
		}
		req.FreshProducerID = &id
	}
	return txn.EndTxnResult{ErrorCode: kerr.ConcurrentTransactions.Code, ProducerID: -1, ProducerEpoch: -1}
}

// AddPartitions adds partitions to the transaction (AddPartitionsToTxn
// from a client, or a TV2 produce's implicit add from a partition leader);
// it answers one code for them all once they are durable.
func (c *TransactionCoordinator) AddPartitions(ctx context.Context, req txn.AddPartitionsRequest) int16 {
	res, code := call(ctx, c, req.TransactionalID, func(now time.Time, m *txn.Manager, reply func(int16)) {
		m.AddPartitions(now, req, reply)
	})
	if code != 0 {
		return code
	}
	return res
}

// AddOffsets adds the group's __consumer_offsets partition to the
// transaction (AddOffsetsToTxn).
func (c *TransactionCoordinator) AddOffsets(ctx context.Context, req txn.AddOffsetsRequest) int16 {
	res, code := call(ctx, c, req.TransactionalID, func(now time.Time, m *txn.Manager, reply func(int16)) {
		m.AddOffsets(now, req, reply)
	})
	if code != 0 {
		return code
	}
	return res
}

// Verify answers a partition leader's verification: one code per
// partition, in request order (0: in the ongoing transaction).
func (c *TransactionCoordinator) Verify(ctx context.Context, req txn.VerifyRequest) []int16 {
	codes, code := call(ctx, c, req.TransactionalID, func(_ time.Time, m *txn.Manager, reply func([]int16)) {
		reply(m.Verify(req))
	})
	if code != 0 {
		codes = make([]int16, len(req.Partitions))
		for i := range codes {
			codes[i] = code
		}
	}
	return codes
}

// DescribeTransaction describes one transactional id
// (DescribeTransactions).
func (c *TransactionCoordinator) DescribeTransaction(ctx context.Context, transactionalID string) txn.Description {
	if transactionalID == "" {
		return txn.Description{ErrorCode: kerr.InvalidRequest.Code}
	}
	d, code := call(ctx, c, transactionalID, func(_ time.Time, m *txn.Manager, reply func(txn.Description)) {
		reply(m.Describe(transactionalID))
	})
	if code != 0 {
		return txn.Description{ErrorCode: code}
	}
	return d
}

// ListTransactions lists the transactions of every partition this node
// coordinates that f keeps, sorted by id, and the unknown state names of
// f. While a partition loads the answer is COORDINATOR_LOAD_IN_PROGRESS,
// as Kafka's.
func (c *TransactionCoordinator) ListTransactions(ctx context.Context, f txn.ListFilter) (listed []txn.Listing, unknownStates []string, code int16) {
	type answer struct {
		listed  []txn.Listing
		unknown []string
	}
	answers := runtime.CallAll(ctx, c.rt, func(now time.Time, s *txnShard, reply func(answer)) {
		l, u := s.mgr.List(now, f)
		reply(answer{l, u})
	})
	for _, a := range answers {
		switch a.Code {
		case 0:
			listed = append(listed, a.Value.listed...)
			unknownStates = a.Value.unknown
		case kerr.NotCoordinator.Code:
			// Moved away since the call started: another broker lists it.
		default:
			return nil, nil, a.Code
		}
	}
	if len(answers) == 0 {
		_, unknownStates = unknownStateNames(f.States)
	}
	slices.SortFunc(listed, func(a, b txn.Listing) int { return strings.Compare(a.TransactionalID, b.TransactionalID) })
	return listed, unknownStates, 0
}

// unknownStateNames parts names into Kafka's state names and the others.
func unknownStateNames(names []string) (known, unknown []string) {
	for _, n := range names {
		if _, ok := txn.ParseState(n); ok {
			known = append(known, n)
		} else {
			unknown = append(unknown, n)
		}
	}
	return known, unknown
}
