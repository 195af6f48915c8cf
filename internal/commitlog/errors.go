package commitlog

import (
	"errors"
	"syscall"
)

// Errors of the log. Callers map them onto Kafka error codes.
var (
	// ErrOffsetOutOfRange: a read below the log start offset or above the log end offset.
	ErrOffsetOutOfRange = errors.New("commitlog: offset out of range")
	// ErrStorage: an append failed for lack of space (KAFKA_STORAGE_ERROR);
	// the log stays online and readable.
	ErrStorage = errors.New("commitlog: storage error")
	// ErrOffline: the log's directory failed with an I/O error; nothing is
	// served from it until the node restarts (KAFKA_STORAGE_ERROR).
	ErrOffline = errors.New("commitlog: log directory offline")
	// ErrRecordBatchTooLarge: a batch exceeds max.message.bytes or the segment size.
	ErrRecordBatchTooLarge = errors.New("commitlog: record batch too large")
	// ErrCorruptBatch: appended bytes are not whole valid batches.
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
