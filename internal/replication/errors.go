package replication

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// ErrorCode maps an error of this package (or of the log beneath it) onto
// the Kafka error code a response carries: a wrapped *kerr.Error keeps its
// code, log failures become KAFKA_STORAGE_ERROR and the like, anything else
// UNKNOWN_SERVER_ERROR. A nil error is NONE (0).
func ErrorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	var ve *records.ValidationError
	if errors.As(err, &ve) && ve.Err != nil {
		return ve.Err.Code
	}
	switch {
	case errors.Is(err, commitlog.ErrOffline), errors.Is(err, commitlog.ErrStorage):
		return kerr.KafkaStorageError.Code
	case errors.Is(err, commitlog.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange.Code
	case errors.Is(err, commitlog.ErrRecordBatchTooLarge):
		return kerr.MessageTooLarge.Code
	case errors.Is(err, commitlog.ErrCorruptBatch):
		return kerr.CorruptMessage.Code
	case errors.Is(err, commitlog.ErrClosed):
		// The partition was deleted or moved away under the request.
		return kerr.NotLeaderForPartition.Code
	}
	return kerr.UnknownServerError.Code
}
