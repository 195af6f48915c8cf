package share

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Kafka's messages for requests it refuses (ShareCoordinatorShard).
const (
	msgNegativePartition   = "The partition id cannot be a negative number."
	msgNegativeLeaderEpoch = "The leader epoch cannot be a negative number."
	msgNegativeStateEpoch  = "The state epoch cannot be a negative number."
	msgWriteUninitialized  = "Write operation on uninitialized share partition not allowed."
	msgReadUninitialized   = "Read operation on uninitialized share partition not allowed."
	msgRestoring           = "The share partition's state is being restored after a failed write."
)

// fail returns a Result with code and msg, or Kafka's message for the
// code when msg is empty.
func fail(code int16, msg string) Result {
	if msg == "" {
		if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
			msg = e.Description
		}
	}
	return Result{ErrorCode: code, ErrorMessage: &msg}
}

// WriteErrorCode maps a failed __share_group_state append to the code
// Kafka's coordinator answers (CoordinatorOperationExceptionHelper): a
// replication shortfall or a timeout is COORDINATOR_NOT_AVAILABLE, a lost
// leadership NOT_COORDINATOR, a record too large UNKNOWN_SERVER_ERROR. An
// error without a Kafka code is COORDINATOR_NOT_AVAILABLE, so that the
// share-partition leader retries.
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
	case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidFetchSize.Code:
		return kerr.UnknownServerError.Code
	}
	return ke.Code
}

func writeResult(err error) Result {
	if err == nil {
		return Result{}
	}
	return fail(WriteErrorCode(err), "")
}
