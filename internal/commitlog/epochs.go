package commitlog

import (
	"errors"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/commitlog/epoch"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// leaderEpochCheckpointFile is Kafka's name for the epoch cache's file.
const leaderEpochCheckpointFile = "leader-epoch-checkpoint"

// openEpochCacheLocked loads the leader epoch cache and fits it to the log
// as loaded. A malformed file is dropped and rebuilt from the batch headers
// of the log, which carry every epoch.
func (l *Log) openEpochCacheLocked() error {
	path := filepath.Join(l.Dir(), leaderEpochCheckpointFile)
	c, err := epoch.Open(l.fsys, path)
	if err != nil {
		if !isMalformed(err) {
			return l.ioFailure("open leader epoch cache", err)
		}
		l.logger.Warn("rebuilding malformed leader epoch cache", "partition", l.tp.String(), "err", err)
		if err := l.fsys.Remove(path); err != nil && !vfs.IsNotExist(err) {
			return l.ioFailure("remove leader epoch cache", err)
		}
		if c, err = epoch.Open(l.fsys, path); err != nil {
			return l.ioFailure("open leader epoch cache", err)
		}
		l.mu.epochs = c
		if err := l.rebuildEpochsLocked(); err != nil {
			return err
		}
	}
	l.mu.epochs = c
	if err := c.TruncateFromEnd(l.activeLocked().nextOffset); err != nil {
		return l.ioFailure("truncate leader epoch cache", err)
	}
	if err := c.TruncateFromStart(l.mu.logStartOffset); err != nil {
		return l.ioFailure("truncate leader epoch cache", err)
	}
	return nil
}

// isMalformed tells bad checkpoint content from an I/O failure.
func isMalformed(err error) bool { return errors.Is(err, checkpoint.ErrMalformed) }

// rebuildEpochsLocked assigns the epoch of every batch header in the log.
func (l *Log) rebuildEpochsLocked() error {
	for _, s := range l.mu.segments {
		size := s.size.Load()
		for pos := int64(0); pos < size; {
			h, err := readHeader(s.log, pos, size)
			if err != nil {
				return l.readFailure(err)
			}
			if err := l.assignEpochLocked(h); err != nil {
				return err
			}
			pos += h.Size()
		}
	}
	return nil
}

// assignEpochLocked records a batch's partition leader epoch when it is a
// new one (Kafka's maybeAssignEpochStartOffset).
func (l *Log) assignEpochLocked(h records.Header) error {
	if h.PartitionLeaderEpoch < 0 {
		return nil
	}
	if latest, ok := l.mu.epochs.LatestEpoch(); ok && latest >= h.PartitionLeaderEpoch {
		return nil
	}
	if err := l.mu.epochs.Assign(h.PartitionLeaderEpoch, h.BaseOffset); err != nil {
		return l.ioFailure("assign leader epoch", err)
	}
	return nil
}

// LatestEpoch is the newest leader epoch in the log.
func (l *Log) LatestEpoch() (int32, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.LatestEpoch()
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch <=
// requested and the offset where the next epoch starts (the log end offset
// for the latest), or (-1, -1) when requested is below the earliest epoch.
func (l *Log) EndOffsetForEpoch(requested int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.EndOffsetFor(requested, l.activeLocked().nextOffset)
}
