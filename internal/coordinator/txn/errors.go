package txn

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// WriteErrorCode maps a failed __transaction_state append to the code
// Kafka's TransactionStateManager answers with: a replication shortfall or
// timeout is COORDINATOR_NOT_AVAILABLE (the client retries), a lost
// leadership NOT_COORDINATOR, a record too large UNKNOWN_SERVER_ERROR. An
// error that carries no Kafka code (a local failure) is
// COORDINATOR_NOT_AVAILABLE, so that the client retries.
func WriteErrorCode(err error) int16 {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return kerr.CoordinatorNotAvailable.Code
	}
	switch ke.Code {
	case kerr.UnknownTopicOrPartition.Code, kerr.NotEnoughReplicas.Code,
		kerr.NotEnoughReplicasAfterAppend.Code, kerr.RequestTimedOut.Code:
		return kerr.CoordinatorNotAvailable.Code
	case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code:
		return kerr.NotCoordinator.Code
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code:
		return kerr.UnknownServerError.Code
	}
	return ke.Code
}

// ErrorForVersion maps a code for the version of the request it answers,
// as Kafka's handlers do: clients older than PRODUCER_FENCED
// (InitProducerId before v4; EndTxn, AddPartitionsToTxn and AddOffsetsToTxn
// before v2) get INVALID_PRODUCER_EPOCH instead.
func ErrorForVersion(key kmsg.Key, version, code int16) int16 {
	if code != kerr.ProducerFenced.Code {
		return code
	}
	switch {
	case key == kmsg.InitProducerID && version < 4,
		(key == kmsg.EndTxn || key == kmsg.AddPartitionsToTxn || key == kmsg.AddOffsetsToTxn) && version < 2:
		return kerr.InvalidProducerEpoch.Code
	}
	return code
}

// EndTxnClientVersion is the transaction version an EndTxn of version
// speaks: v5+ is TV2 (the client bumps its epoch at every EndTxn).
func EndTxnClientVersion(version int16) TransactionVersion {
	if version > 4 {
		return TV2
	}
	return TV0
}

// VerifyErrorForProducer maps a partition's code from a verification
// (Verify, AddPartitionsToTxn VerifyOnly) to what the producer whose batch
// was verified gets, as Kafka's AddPartitionsToTxnManager does: producers
// expect INVALID_PRODUCER_EPOCH for a fenced epoch, and
// TRANSACTION_ABORTABLE only when their request version knows it (Produce
// v11+, TxnOffsetCommit v5+), INVALID_TXN_STATE otherwise.
func VerifyErrorForProducer(code int16, abortableSupported bool) int16 {
	switch {
	case code == kerr.ProducerFenced.Code:
		return kerr.InvalidProducerEpoch.Code
	case code == kerr.TransactionAbortable.Code && !abortableSupported:
		return kerr.InvalidTxnState.Code
	}
	return code
}
