package commitlog

import (
	"fmt"
	"syscall"
)

// FilesPerPartition is the open files an idle partition holds: its active
// segment's .log (index files are opened per operation). Each sealed
// segment holds one more, as in Kafka.
const FilesPerPartition = 1

// fileLimitReserve is the part of the open file limit kept for what is not
// a partition: client and peer connections, the metadata log, listeners.
func fileLimitReserve(limit uint64) uint64 { return max(64, limit/4) }

// PartitionsWithinFileLimit is how many partitions this process can host
// within its open file limit (RLIMIT_NOFILE, which the Go runtime raises to
// the hard limit at start) with room kept for connections: the ceiling a
// controller applies to each broker's partitions. Zero means no ceiling (no
// limit, or it cannot be read).
func PartitionsWithinFileLimit() int {
	limit, ok := fileLimit()
	if !ok {
		return 0
	}
	return partitionsWithin(limit)
}

func partitionsWithin(limit uint64) int {
	if limit >= 1<<40 {
		return 0 // unlimited in practice
	}
	reserve := fileLimitReserve(limit)
	if limit <= reserve+FilesPerPartition {
		return 1
	}
	return int((limit - reserve) / FilesPerPartition)
}

// FileLimitSummary describes the open file limit and the partitions it
// allows, for the start-up log.
func FileLimitSummary() string {
	limit, ok := fileLimit()
	if !ok {
		return "open file limit unknown: no partition ceiling"
	}
	if n := partitionsWithin(limit); n > 0 {
		return fmt.Sprintf("open file limit %d: room for %d partitions per broker (%d kept for connections)", limit, n, fileLimitReserve(limit))
	}
	return fmt.Sprintf("open file limit %d: no partition ceiling", limit)
}

func fileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return rl.Cur, true
}
