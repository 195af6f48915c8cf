package groupcoord

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// verifyOffsetsPartition asks the transaction coordinator whether the
// group's offsets partition is in the producer's transaction before its
// offsets are written, as Kafka's group coordinator does through the
// replica manager (CoordinatorPartitionWriter.maybeStartTransactionVerification).
// From TxnOffsetCommit v5 (Transactions V2) the client sends no
// AddOffsetsToTxn and this adds the partition: without it the
// transaction's marker never reaches the partition and the offsets stay
// pending for ever (OffsetFetch answers UNSTABLE_OFFSET_COMMIT to the
// group's next member). It returns the request's error code, 0 to write.
func (c *GroupCoordinator) verifyOffsetsPartition(ctx context.Context, req group.TxnCommitRequest) int16 {
	if c.verifier == nil || req.TransactionalID == "" {
		return 0
	}
	tp := kafka.TopicPartition{Topic: OffsetsTopic, Partition: c.PartitionFor(req.GroupID)}
	codes := c.verifier.VerifyTransaction(ctx, replication.VerifyRequest{
		TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
		Partitions: []kafka.TopicPartition{tp}, AddPartitions: req.Version >= 5,
	})
	code, ok := codes[tp]
	if !ok {
		code = kerr.CoordinatorNotAvailable.Code
	}
	return txnOffsetCommitError(code, req.Version)
}

// txnOffsetCommitError maps a verification's answer as Kafka does for
// TxnOffsetCommit: AddPartitionsToTxnManager's PRODUCER_FENCED as
// INVALID_PRODUCER_EPOCH and TRANSACTION_ABORTABLE as INVALID_TXN_STATE
// before v4, then the coordinator's handleOperationException
// (NETWORK_EXCEPTION as COORDINATOR_LOAD_IN_PROGRESS, retried without a
// coordinator lookup); the rest as answered.
func txnOffsetCommitError(code, version int16) int16 {
	switch {
	case code == kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	case code == kerr.TransactionAbortable.Code && version < 4:
		return kerr.InvalidTxnState.Code
	case code == kerr.NetworkException.Code:
		return kerr.CoordinatorLoadInProgress.Code
	}
	return code
}
