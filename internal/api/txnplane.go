package api

// The transaction APIs (FindCoordinator for transaction keys,
// InitProducerId with a transactional id, AddPartitionsToTxn,
// AddOffsetsToTxn, EndTxn, DescribeTransactions, ListTransactions) reach
// the transaction coordinator through TxnPlane;
// *txncoord.TransactionCoordinator implements it. Handlers block until the
// coordinator's write is durable, as Kafka's do.

import (
	"context"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/coordinator/txncoord"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TxnPlane is the transaction coordinator as the handlers see it. Codes
// are Kafka error codes (0 for none), before the per-version mapping
// (txn.ErrorForVersion) the handlers apply.
type TxnPlane interface {
	FindCoordinator(ctx context.Context, transactionalID, listener string) (runtime.Node, int16)
	InitProducerID(ctx context.Context, req txn.InitRequest) txn.InitResult
	AddPartitions(ctx context.Context, req txn.AddPartitionsRequest) int16
	AddOffsets(ctx context.Context, req txn.AddOffsetsRequest) int16
	Verify(ctx context.Context, req txn.VerifyRequest) []int16
	EndTxn(ctx context.Context, req txn.EndTxnRequest) txn.EndTxnResult
	DescribeTransaction(ctx context.Context, transactionalID string) txn.Description
	ListTransactions(ctx context.Context, f txn.ListFilter) (listed []txn.Listing, unknownStates []string, code int16)
}

var _ TxnPlane = (*txncoord.TransactionCoordinator)(nil)

// TxnPlaneDeps is what the transaction handlers need (BrokerDeps.Txns).
type TxnPlaneDeps struct {
	// Coordinator serves the transactions; nil leaves the transaction APIs
	// out (a transactional InitProducerId then answers
	// COORDINATOR_NOT_AVAILABLE).
	Coordinator TxnPlane
	// Image is the latest metadata image: AddPartitionsToTxn refuses
	// partitions that do not exist. Nil treats every topic as unknown.
	Image func() *metadata.Image
}

func (d *TxnPlaneDeps) image() *metadata.Image {
	if d.Image == nil {
		return metadata.EmptyImage()
	}
	return d.Image()
}

// txnCoordinator is the deps' coordinator, nil when transactions are not
// wired.
func (d *TxnPlaneDeps) txnCoordinator() TxnPlane {
	if d == nil {
		return nil
	}
	return d.Coordinator
}
