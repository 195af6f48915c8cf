package commitlog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// CleanShutdownFile is the marker a log dir holds after a clean stop
// (Kafka's .kafka_cleanshutdown): logs in it open without recovery.
const CleanShutdownFile = ".kafka_cleanshutdown"

// ManagerOptions configure a Manager (broker settings).
type ManagerOptions struct {
	// Dirs is log.dirs.
	Dirs []string
	// Defaults are the log options of partitions without topic overrides.
	Defaults Options
	// Decoder decodes every log's records, for reads (timestamp lookups,
	// the cleaner) and for Validate alike: the per-batch cap and the
	// broker's decompression budget. nil: the default cap, no budget.
	Decoder *records.Decoder
	// RetentionCheckInterval is log.retention.check.interval.ms.
	RetentionCheckInterval time.Duration
	// FlushCheckInterval is log.flush.scheduler.interval.ms (flush.ms checks).
	FlushCheckInterval time.Duration
	// RecoveryPointCheckpointInterval is log.flush.offset.checkpoint.interval.ms.
	RecoveryPointCheckpointInterval time.Duration
	// TailFlushMinBytes: the recovery-point checkpoint tick syncs the
	// tail of a log that took at least this many bytes since its last
	// tail flush (FlushTail). A smaller tail costs less to re-validate
	// after a crash (~1 ms per MiB) than its 3-5 fsyncs every interval
	// cost a broker with thousands of quiet partitions.
	TailFlushMinBytes int64
	// LogStartCheckpointInterval is log.flush.start.offset.checkpoint.interval.ms.
	LogStartCheckpointInterval time.Duration
	// ProducerIDExpiration is producer.id.expiration.ms and
	// ProducerIDExpirationCheckInterval producer.id.expiration.check.interval.ms.
	ProducerIDExpiration              time.Duration
	ProducerIDExpirationCheckInterval time.Duration
	// DeleteCheckInterval is how often segments renamed .deleted are
	// checked for removal (Kafka schedules each one; file.delete.delay.ms).
	DeleteCheckInterval time.Duration
	// Metrics is the registry of the Manager's series (damaged batches);
	// nil registers nothing.
	Metrics prometheus.Registerer
}

// DefaultTailFlushMinBytes is ManagerOptions.TailFlushMinBytes's default.
const DefaultTailFlushMinBytes = 1 << 20

// DefaultManagerOptions returns Kafka's defaults for dirs.
func DefaultManagerOptions(dirs ...string) ManagerOptions {
	return ManagerOptions{
		Dirs:                              dirs,
		Defaults:                          DefaultOptions(),
		RetentionCheckInterval:            5 * time.Minute,
		FlushCheckInterval:                0, // Kafka's default is Long.MAX_VALUE: never
		RecoveryPointCheckpointInterval:   time.Minute,
		TailFlushMinBytes:                 DefaultTailFlushMinBytes,
		LogStartCheckpointInterval:        time.Minute,
		ProducerIDExpiration:              24 * time.Hour,
		ProducerIDExpirationCheckInterval: 10 * time.Minute,
		DeleteCheckInterval:               time.Second,
	}
}

// Manager owns the logs of one or more log dirs: it loads them at start-up
// (recovering after an unclean stop), creates and deletes them, runs the
// periodic tasks (retention, flush, checkpoints, file deletion) and takes a
// dir offline when its disk fails.
type Manager struct {
	fsys    vfs.FS
	opts    ManagerOptions
	clk     clock.Clock
	logger  *slog.Logger
	metrics *managerMetrics

	mu struct {
		sync.Mutex
		logs    map[kafka.TopicPartition]*Log
		dirOf   map[kafka.TopicPartition]string
		offline map[string]error
		full    map[string]bool // dirs in a full-disk episode
		retired []retiredLog
		closed  bool
		// futures are the logs being filled in another dir (future.go).
		// Invariant: a future's dir differs from its current log's.
		futures map[kafka.TopicPartition]*futureLog
		// preferred is the dir AlterReplicaLogDirs named for a partition
		// not hosted yet (Kafka's preferredLogDirs).
		preferred map[kafka.TopicPartition]string
		// perDir counts the logs and futures in each dir, for placing a new
		// log without counting them all (dircount.go).
		// Invariant: perDir[d] is the number of dirOf entries plus futures
		// whose dir is d; only the dircount.go methods change the three.
		perDir map[string]int
	}
	// moveMu serialises the moves between log dirs (AlterLogDir, StepFuture).
	moveMu sync.Mutex
	// moverWake wakes the mover goroutine (mover.go).
	moverWake chan struct{}
	// onDirOffline is told of each dir that goes offline (SetDirOfflineHandler).
	onDirOffline atomic.Pointer[func(dir string, online int)]
	// createMu serialises GetOrCreate's file work, which runs outside mu so
	// lookups never wait for I/O.
	createMu sync.Mutex
	// flusher syncs what rolls sealed, off the append path (flusher.go).
	flusher *flusher
	// checkpointMu serialises the checkpoint writes (writeCheckpoints).
	checkpointMu sync.Mutex
	// stop ends the scheduler goroutine; done is closed when it has returned.
	stop context.CancelFunc
	done chan struct{}
}

// NewManager creates the log dirs if needed and loads every partition in
// them. A dir that fails to load is offline, not fatal, unless all are.
func NewManager(fsys vfs.FS, opts ManagerOptions, clk clock.Clock, logger *slog.Logger) (*Manager, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(opts.Dirs) == 0 {
		return nil, errors.New("commitlog: no log dirs")
	}
	metrics, err := newManagerMetrics(opts.Metrics)
	if err != nil {
		return nil, fmt.Errorf("commitlog metrics: %w", err)
	}
	m := &Manager{fsys: fsys, opts: opts, clk: clk, logger: logger, metrics: metrics}
	m.mu.logs = map[kafka.TopicPartition]*Log{}
	m.mu.dirOf = map[kafka.TopicPartition]string{}
	m.mu.offline = map[string]error{}
	m.mu.full = map[string]bool{}
	m.mu.futures = map[kafka.TopicPartition]*futureLog{}
	m.mu.preferred = map[kafka.TopicPartition]string{}
	m.mu.perDir = map[string]int{}
	m.moverWake = make(chan struct{}, 1)
	m.flusher = newFlusher(logger)
	resume := m.settleMoves()
	for _, dir := range opts.Dirs {
		if err := m.loadDir(dir, resume[dir]); err != nil {
			logger.Error("log dir failed to load; offline", "dir", dir, "err", err)
			m.mu.offline[dir] = err
		}
	}
	if len(m.mu.offline) == len(opts.Dirs) {
		m.flusher.close()
		m.closeLogs()
		return nil, fmt.Errorf("commitlog: every log dir failed: %w", m.mu.offline[opts.Dirs[0]])
	}
	logger.Info(FileLimitSummary())
	return m, nil
}

// parseLogDirName splits "<topic>-<partition>".
func parseLogDirName(name string) (kafka.TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return kafka.TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 {
		return kafka.TopicPartition{}, false
	}
	return kafka.TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}

// readCheckpoint reads one checkpoint file; a missing or malformed file is
// an empty map (malformed means recovery from the start, as in Kafka).
func (m *Manager) readCheckpoint(dir, name string) (map[kafka.TopicPartition]int64, error) {
	offs, err := checkpoint.Read(m.fsys, filepath.Join(dir, name))
	switch {
	case err == nil:
		return offs, nil
	case vfs.IsNotExist(err):
		return map[kafka.TopicPartition]int64{}, nil
	case errors.Is(err, checkpoint.ErrMalformed):
		m.logger.Warn("ignoring malformed checkpoint", "dir", dir, "file", name, "err", err)
		return map[kafka.TopicPartition]int64{}, nil
	}
	return nil, err
}

func (m *Manager) loadDir(dir string, futures map[string]bool) error {
	if err := m.fsys.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create log dir: %w", err) // names the dir
	}
	if err := m.fsys.SyncDir(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("sync parent of log dir %s: %w", dir, err)
	}
	marker := filepath.Join(dir, CleanShutdownFile)
	_, err := m.fsys.Stat(marker)
	clean := err == nil
	recovery, err := m.readCheckpoint(dir, checkpoint.RecoveryPointFile)
	if err != nil {
		return err
	}
	starts, err := m.readCheckpoint(dir, checkpoint.LogStartOffsetFile)
	if err != nil {
		return err
	}
	cleaned, err := m.readCheckpoint(dir, checkpoint.CleanerOffsetFile)
	if err != nil {
		return err
	}
	names, err := m.fsys.List(dir)
	if err != nil {
		return fmt.Errorf("list log dir %s: %w", dir, err)
	}
	// The dir's logs join the Manager only when all of them loaded.
	loaded := map[kafka.TopicPartition]*Log{}
	loadedFutures := map[kafka.TopicPartition]*futureLog{}
	fail := func(err error) error {
		for _, l := range loaded {
			l.Close()
		}
		for _, f := range loadedFutures {
			f.log.Close()
		}
		return err
	}
	for _, name := range names {
		if strings.HasSuffix(name, deleteDirSuffix) {
			// A deletion the stop interrupted is finished now.
			if err := m.fsys.RemoveAll(filepath.Join(dir, name)); err != nil {
				return fail(fmt.Errorf("remove deleted log %s: %w", name, err))
			}
			continue
		}
		if futures[name] {
			st := StartState{RecoveryPoint: recovery[tpOfFuture(name)], LogStartOffset: starts[tpOfFuture(name)],
				CleanShutdown: clean, DefaultOptions: true}
			f, err := m.loadFuture(dir, name, st)
			if err != nil {
				return fail(err)
			}
			loadedFutures[f.log.tp] = f
			continue
		}
		tp, ok := parseLogDirName(name)
		if !ok || tp.Topic == "__cluster_metadata" {
			continue // not a partition dir, or the KRaft log (the quorum owns it)
		}
		if info, err := m.fsys.Stat(filepath.Join(dir, name)); err != nil || !info.IsDir() {
			continue
		}
		st := StartState{RecoveryPoint: recovery[tp], LogStartOffset: starts[tp], CleanShutdown: clean,
			CleanerOffset: cleaned[tp], DefaultOptions: true}
		if _, dup := m.mu.logs[tp]; dup {
			return fail(fmt.Errorf("partition %s is in both %s and %s", tp, m.mu.dirOf[tp], dir))
		}
		l, err := m.openLog(dir, tp, m.opts.Defaults, st)
		if err != nil {
			return fail(fmt.Errorf("load %s: %w", name, err))
		}
		loaded[tp] = l
	}
	// The marker describes one stop only: remove it (durably) before appends.
	if clean {
		if err := m.fsys.Remove(marker); err != nil {
			return fail(fmt.Errorf("remove clean shutdown marker: %w", err))
		}
		if err := m.fsys.SyncDir(dir); err != nil {
			return fail(fmt.Errorf("sync %s: %w", dir, err))
		}
	}
	for tp, l := range loaded {
		m.mu.logs[tp] = l
		m.setDirLocked(tp, dir)
	}
	for tp, f := range loadedFutures {
		m.setFutureLocked(tp, f)
	}
	m.logLoaded(dir, len(loaded), clean)
	return nil
}

func (m *Manager) openLog(dir string, tp kafka.TopicPartition, opts Options, st StartState) (*Log, error) {
	return m.openLogAt(dir, filepath.Join(dir, tp.String()), tp, opts, st)
}

// openLogAt opens the log at path in the log dir dir. The callbacks find
// the log's dir when they run: a move changes it.
func (m *Manager) openLogAt(dir, path string, tp kafka.TopicPartition, opts Options, st StartState) (*Log, error) {
	l, err := Open(m.fsys, path, tp, opts, m.clk, st, m.logger)
	if err != nil {
		return nil, err
	}
	l.onOffline = func(error) { m.markDirOffline(m.logDirOf(l, dir)) }
	l.decoder = m.opts.Decoder
	l.onCorrupt = func(*CorruptBatchError) { m.metrics.corruptBatch(l) }
	l.onFull = func(full bool, err error) { m.dirFull(m.logDirOf(l, dir), l.tp, full, err) }
	l.onRoll = m.flusher.enqueue
	l.onTruncated = func() {
		if err := m.CheckpointRecoveryPoints(); err != nil {
			m.logger.Warn("recovery-point checkpoint after a truncation failed", "partition", l.tp.String(), "err", err)
		}
	}
	return l, nil
}

// logDirOf is the log dir holding l now: its current or future dir, else
// where it was opened.
func (m *Manager) logDirOf(l *Log, opened string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.logs[l.tp] == l {
		return m.mu.dirOf[l.tp]
	}
	if f := m.mu.futures[l.tp]; f != nil && f.log == l {
		return f.dir
	}
	return opened
}

// dirFull logs the start of a full-disk episode of dir (the first append
// that failed for lack of space) and its end (the next that succeeded),
// once each, however many partitions meet it.
func (m *Manager) dirFull(dir string, tp kafka.TopicPartition, full bool, err error) {
	m.mu.Lock()
	changed := m.mu.full[dir] != full
	m.mu.full[dir] = full
	m.mu.Unlock()
	switch {
	case changed && full:
		m.logger.Error("log dir full: no space left on device, appends fail with KAFKA_STORAGE_ERROR until space is freed",
			"dir", dir, "partition", tp.String(), "err", err)
	case changed:
		m.logger.Info("log dir has space again: appends succeed", "dir", dir, "partition", tp.String())
	}
}

// markDirOffline takes every log of dir offline after an I/O error in one.
func (m *Manager) markDirOffline(dir string) {
	m.mu.Lock()
	if _, already := m.mu.offline[dir]; already {
		m.mu.Unlock()
		return
	}
	m.mu.offline[dir] = errors.New("I/O error")
	online := len(m.opts.Dirs) - len(m.mu.offline)
	var logs []*Log
	for tp, d := range m.mu.dirOf {
		if d == dir {
			logs = append(logs, m.mu.logs[tp])
		}
	}
	for tp, f := range m.mu.futures {
		if f.dir == dir {
			// Kafka's removeFutureLocalReplica(deleteFromLogDir = false):
			// the move ends, its files stay.
			logs = append(logs, f.log)
			m.dropFutureLocked(tp)
		}
	}
	m.mu.Unlock()
	m.logger.Error("log dir offline", "dir", dir, "partitions", len(logs))
	for _, l := range logs {
		l.offline.Store(true)
	}
	if fn := m.onDirOffline.Load(); fn != nil {
		(*fn)(dir, online)
	}
}

// SetDirOfflineHandler sets what is done when a dir goes offline at run
// time, given how many dirs are still online (the node halts as Kafka's
// broker does when none is, or when it is the metadata log dir).
func (m *Manager) SetDirOfflineHandler(fn func(dir string, online int)) {
	m.onDirOffline.Store(&fn)
}

// OfflineDirs lists the dirs that failed.
func (m *Manager) OfflineDirs() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.mu.offline))
	for d := range m.mu.offline {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// Get returns the log of tp if it is loaded.
func (m *Manager) Get(tp kafka.TopicPartition) (*Log, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.mu.logs[tp]
	return l, ok
}

// Logs returns every loaded log, sorted by partition.
func (m *Manager) Logs() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.mu.logs))
	for _, l := range m.mu.logs {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].tp, out[j].tp
		return a.Topic < b.Topic || a.Topic == b.Topic && a.Partition < b.Partition
	})
	return out
}

// GetOrCreate returns the log of tp, creating it (with its
// partition.metadata) in the online dir holding the fewest logs. An
// existing log whose topic id differs is an error (a deleted and recreated
// topic whose old log was not removed yet).
func (m *Manager) GetOrCreate(tp kafka.TopicPartition, topicID kafka.UUID, opts Options) (*Log, error) {
	m.createMu.Lock()
	defer m.createMu.Unlock()
	m.mu.Lock()
	closed := m.mu.closed
	l, ok := m.mu.logs[tp]
	dir, dirErr := m.pickDirLocked(tp)
	m.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if ok {
		path := filepath.Join(l.Dir(), metafile.PartitionMetadataFile)
		id, err := metafile.ReadPartitionMetadata(m.fsys, path)
		if err == nil && !topicID.IsZero() && id != topicID {
			return nil, fmt.Errorf("log %s has topic id %s, not %s", tp, id, topicID)
		}
		if vfs.IsNotExist(err) && !topicID.IsZero() {
			if err := metafile.WritePartitionMetadata(m.fsys, path, topicID); err != nil {
				return nil, fmt.Errorf("write partition metadata of %s: %w", tp, err)
			}
		}
		return l, nil
	}
	if dirErr != nil {
		return nil, dirErr
	}
	l, err := m.openLog(dir, tp, opts, StartState{CleanShutdown: true})
	if err != nil {
		return nil, err
	}
	if !topicID.IsZero() {
		if err := metafile.WritePartitionMetadata(m.fsys, filepath.Join(l.Dir(), metafile.PartitionMetadataFile), topicID); err != nil {
			l.Delete()
			return nil, fmt.Errorf("create log %s: %w", tp, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mu.closed {
		l.Close()
		return nil, ErrClosed
	}
	m.mu.logs[tp] = l
	m.setDirLocked(tp, dir)
	delete(m.mu.preferred, tp)
	return l, nil
}

// pickDirLocked places a new log as Kafka's LogManager.nextLogDirs does:
// the dir AlterReplicaLogDirs asked for, else the online dir holding the
// fewest logs, current and future (the first of log.dirs on a tie).
func (m *Manager) pickDirLocked(tp kafka.TopicPartition) (string, error) {
	if d, ok := m.mu.preferred[tp]; ok {
		if _, off := m.mu.offline[d]; !off {
			return d, nil
		}
	}
	var online []string
	for _, d := range m.opts.Dirs {
		if _, off := m.mu.offline[d]; !off {
			online = append(online, d)
		}
	}
	if len(online) == 0 {
		return "", fmt.Errorf("%w: no online log dir", ErrOffline)
	}
	best := online[0]
	for _, d := range online[1:] {
		if m.mu.perDir[d] < m.mu.perDir[best] {
			best = d
		}
	}
	return best, nil
}

// Delete removes the log of tp (topic deletion) the way Kafka does: its
// directory is renamed "<topic>-<partition>.<id>-delete" at once, and
// removed file.delete.delay.ms later, so fetches in flight complete.
func (m *Manager) Delete(tp kafka.TopicPartition) error {
	// Not in the middle of a move's step: a swap renaming the future log
	// while it is removed would look like a failing disk.
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	m.mu.Lock()
	l, ok := m.mu.logs[tp]
	dir := m.mu.dirOf[tp]
	fut := m.mu.futures[tp]
	delete(m.mu.logs, tp)
	m.dropDirLocked(tp)
	m.dropFutureLocked(tp)
	delete(m.mu.preferred, tp)
	m.mu.Unlock()
	if fut != nil {
		if err := m.discardFuture(fut); err != nil {
			m.logger.Warn("removing the future log of a deleted partition", "partition", tp.String(), "err", err)
		}
	}
	if !ok {
		return nil
	}
	id, err := kafka.RandomUUID()
	if err != nil {
		return fmt.Errorf("delete log %s: %w", tp, err)
	}
	if err := l.Retire(filepath.Join(dir, fmt.Sprintf("%s.%x%s", tp, id[:], deleteDirSuffix))); err != nil {
		m.markDirOffline(dir)
		return errors.Join(err, l.Delete())
	}
	m.mu.Lock()
	m.mu.retired = append(m.mu.retired, retiredLog{log: l, at: m.clk.Now().Add(l.Options().FileDeleteDelay)})
	m.mu.Unlock()
	return nil
}

// deleteDirSuffix marks a partition directory being deleted.
const deleteDirSuffix = "-delete"

// retiredLog is a deleted log whose directory is removed at a deadline.
type retiredLog struct {
	log *Log
	at  time.Time
}

// removeRetiredLogs removes the directories of deleted logs whose delay
// passed (all of them when force is set).
func (m *Manager) removeRetiredLogs(now time.Time, force bool) error {
	m.mu.Lock()
	var due []*Log
	keep := m.mu.retired[:0]
	for _, r := range m.mu.retired {
		if force || !now.Before(r.at) {
			due = append(due, r.log)
		} else {
			keep = append(keep, r)
		}
	}
	m.mu.retired = keep
	m.mu.Unlock()
	var errs []error
	for _, l := range due {
		errs = append(errs, l.Delete())
	}
	return errors.Join(errs...)
}

// logLoaded says how a log dir was loaded. Whether the last stop was clean
// matters only for logs that were there to recover: a new dir says nothing
// of it, and a dir recovered after an unclean stop says so.
func (m *Manager) logLoaded(dir string, logs int, clean bool) {
	switch {
	case logs == 0:
		m.logger.Info("loaded log dir", "dir", dir, "logs", 0)
	case clean:
		m.logger.Info("loaded log dir", "dir", dir, "logs", logs, "clean_shutdown", true)
	default:
		m.logger.Warn("loaded log dir after an unclean shutdown: logs recovered from their recovery points", "dir", dir, "logs", logs, "clean_shutdown", false)
	}
}
