package commitlog

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Moving a partition between log dirs of the broker (KIP-113,
// AlterReplicaLogDirs) works as Kafka's: a future log
// "<topic>-<p>.<uuid>-future" is created in the destination dir, filled
// from the current log while appends continue (mover.go, Kafka's
// ReplicaAlterLogDirsThread), and swapped in by renames once it has caught
// up under the current log's lock (ReplaceCurrentWithFuture).

// Errors of AlterLogDir; callers map them onto Kafka's codes.
var (
	// ErrLogDirNotFound: the destination is not one of log.dirs (LOG_DIR_NOT_FOUND).
	ErrLogDirNotFound = errors.New("commitlog: log dir not found in the config")
	// ErrNoReplica: the broker has no log of the partition (REPLICA_NOT_AVAILABLE);
	// the destination is remembered for when it is created.
	ErrNoReplica = errors.New("commitlog: replica not available")
)

// futureLog is a partition's log being filled in another log dir.
type futureLog struct {
	log *Log
	dir string // the destination log dir (one of ManagerOptions.Dirs)
	id  string // the 32 hex digits of its dir name, reused by the swap's -delete name
}

// futureDirName is Kafka's UnifiedLog.logFutureDirName.
func futureDirName(tp kafka.TopicPartition, id string) string {
	return fmt.Sprintf("%s.%s-future", tp, id)
}

// configuredDir returns the log dir of log.dirs whose absolute path is
// path, as Kafka's LogManager.isLogDirOnline compares (DescribeLogDirs
// reports absolute paths).
func (m *Manager) configuredDir(path string) (string, bool) {
	for _, d := range m.opts.Dirs {
		if absOrSelf(d) == path {
			return d, true
		}
	}
	return "", false
}

func absOrSelf(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// AlterLogDir moves the log of tp to the log dir dest, as Kafka's
// ReplicaManager.alterReplicaLogDirs does for one partition: a move to
// another destination than a running one's abandons it; a partition not
// hosted here gets ErrNoReplica and will be created in dest; a move to the
// dir the log is in does nothing.
func (m *Manager) AlterLogDir(tp kafka.TopicPartition, dest string) error {
	dir, ok := m.configuredDir(dest)
	if !ok {
		return fmt.Errorf("%w: log dir %s", ErrLogDirNotFound, dest)
	}
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	m.mu.Lock()
	_, offline := m.mu.offline[dir]
	cur, hosted := m.mu.logs[tp]
	curDir := m.mu.dirOf[tp]
	fut := m.mu.futures[tp]
	if offline {
		m.mu.Unlock()
		return fmt.Errorf("%w: log directory %s is offline", ErrOffline, dir)
	}
	if fut != nil && fut.dir != dir {
		m.dropFutureLocked(tp)
	}
	if (!hosted || curDir != dir) && (fut == nil || fut.dir != dir) {
		m.mu.preferred[tp] = dir
	}
	m.mu.Unlock()
	if fut != nil && fut.dir != dir {
		m.logger.Info("abandoning the move of a partition to another log dir", "partition", tp.String(), "dir", fut.dir)
		if err := m.discardFuture(fut); err != nil {
			return err
		}
	}
	switch {
	case !hosted:
		return fmt.Errorf("%w: %s", ErrNoReplica, tp)
	case cur.Offline():
		return fmt.Errorf("%w: partition %s is offline", ErrOffline, tp)
	case curDir == dir, fut != nil && fut.dir == dir:
		return nil
	}
	return m.createFuture(tp, cur, dir)
}

// createFuture opens an empty future log of tp in dir, starting at the
// current log's start offset.
func (m *Manager) createFuture(tp kafka.TopicPartition, cur *Log, dir string) error {
	id, err := kafka.RandomUUID()
	if err != nil {
		return fmt.Errorf("move %s: %w", tp, err)
	}
	f := &futureLog{dir: dir, id: fmt.Sprintf("%x", id[:])}
	f.log, err = m.openLogAt(dir, filepath.Join(dir, futureDirName(tp, f.id)), tp, cur.Options(), StartState{CleanShutdown: true})
	if err != nil {
		m.markDirOffline(dir)
		return fmt.Errorf("%w: create future log of %s: %w", ErrOffline, tp, err)
	}
	topicID, err := metafile.ReadPartitionMetadata(m.fsys, filepath.Join(cur.Dir(), metafile.PartitionMetadataFile))
	if err == nil {
		err = metafile.WritePartitionMetadata(m.fsys, filepath.Join(f.log.Dir(), metafile.PartitionMetadataFile), topicID)
	} else if vfs.IsNotExist(err) {
		err = nil
	}
	if err == nil && cur.LogStartOffset() > 0 {
		err = f.log.TruncateFullyAndStartAt(cur.LogStartOffset())
	}
	if err != nil {
		return errors.Join(fmt.Errorf("create future log of %s: %w", tp, err), m.discardFuture(f))
	}
	m.mu.Lock()
	m.setFutureLocked(tp, f)
	delete(m.mu.preferred, tp)
	m.mu.Unlock()
	m.logger.Info("moving partition to another log dir", "partition", tp.String(), "from", filepath.Dir(cur.Dir()), "to", dir,
		"log_end_offset", cur.LogEndOffset())
	m.wakeMover()
	return nil
}

// discardFuture deletes a future log that is no longer wanted (Kafka's
// removeFutureLocalReplica).
func (m *Manager) discardFuture(f *futureLog) error {
	if err := f.log.Delete(); err != nil {
		return fmt.Errorf("remove future log %s: %w", f.log.Dir(), err)
	}
	return nil
}

// FutureLogs returns the future logs, each with the log it will replace's
// end offset lag (DescribeLogDirs' offset lag of a future replica).
func (m *Manager) FutureLogs() []FutureInfo {
	m.mu.Lock()
	out := make([]FutureInfo, 0, len(m.mu.futures))
	cur := map[kafka.TopicPartition]*Log{}
	for tp, f := range m.mu.futures {
		out = append(out, FutureInfo{Log: f.log, Dir: f.dir})
		cur[tp] = m.mu.logs[tp]
	}
	m.mu.Unlock()
	for i := range out {
		out[i].Lag = -1 // Kafka's INVALID_OFFSET_LAG: no current log
		if c := cur[out[i].Log.tp]; c != nil && !c.Offline() {
			out[i].Lag = c.LogEndOffset() - out[i].Log.LogEndOffset()
		}
	}
	return out
}

// FutureInfo describes one future log.
type FutureInfo struct {
	Log *Log
	Dir string // its log dir
	Lag int64  // the current log's end offset minus its own; -1 unknown
}

// DirOf returns the log dir (as configured) holding the current log of tp.
func (m *Manager) DirOf(tp kafka.TopicPartition) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.mu.dirOf[tp]
	return d, ok
}
