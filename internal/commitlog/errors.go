package commitlog

import (
	"errors"
	"fmt"
	"syscall"
)

// Errors of the log. Callers map them onto Kafka error codes.
var (
	// ErrOffsetOutOfRange: a read below the log start offset or above the log end offset.
	ErrOffsetOutOfRange = errors.New("commitlog: offset out of range")
	// ErrStorage: an append failed for lack of space (KAFKA_STORAGE_ERROR);
	// the log stays online and readable. ClientMessage names the cause.
	ErrStorage = errors.New("commitlog: storage error")
	// ErrOffline: the log's directory failed with an I/O error; nothing is
	// served from it until the node restarts (KAFKA_STORAGE_ERROR).
	ErrOffline = errors.New("commitlog: log directory offline")
	// ErrRecordBatchTooLarge: a batch exceeds max.message.bytes or the segment size.
	ErrRecordBatchTooLarge = errors.New("commitlog: record batch too large")
	// ErrCorruptBatch: appended bytes are not whole valid batches, or a read
	// reached damaged bytes on disk (a *CorruptBatchError): CORRUPT_MESSAGE.
	ErrCorruptBatch = errors.New("commitlog: corrupt record batch")
	// ErrOutOfOrderOffsets: a follower append does not continue the log.
	ErrOutOfOrderOffsets = errors.New("commitlog: out of order offsets")
	// ErrClosed: the log was closed or deleted.
	ErrClosed = errors.New("commitlog: log closed")
)

// isNoSpace reports whether err is the disk being full, which Kafka treats
// as a failed append rather than a failed disk.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// NoSpaceMessage is the error message a Produce response carries when an
// append failed for lack of space (Kafka sends KAFKA_STORAGE_ERROR without
// one, leaving the client to guess).
const NoSpaceMessage = "No space left on device: the partition's log directory is full, the records were not written"

// ClientMessage is the error message a response carries for err, or "" when
// the log has nothing to add to the error code: a full disk, and why a log
// is offline when it was stopped on its own (a lost segment).
func ClientMessage(err error) string {
	if errors.Is(err, ErrStorage) {
		return NoSpaceMessage
	}
	var missing *MissingSegmentError
	if errors.As(err, &missing) {
		// Without the server's paths.
		return fmt.Sprintf("no segment holds offsets %d to %d of this partition on this broker (a segment file was lost): it is offline here",
			missing.From, missing.To-1)
	}
	return ""
}
