package cleaner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// LogSource lists the logs to consider; *commitlog.Manager is one.
type LogSource interface {
	Logs() []*commitlog.Log
}

// Cleaner compacts the logs whose cleanup.policy holds compact, as Kafka's
// LogCleaner: Threads goroutines each take the filthiest log (largest dirty
// ratio above min.cleanable.dirty.ratio, or dirty data older than
// max.compaction.lag.ms, or else tombstones whose delete horizon passed),
// clean it and record how far in the log dir's cleaner-offset-checkpoint.
// Each log's current Options are read at every pass, so a cleanup.policy
// change applies without a restart.
type Cleaner struct {
	fsys    vfs.FS
	logs    LogSource
	clk     clock.Clock
	logger  *slog.Logger
	metrics *metrics
	// kstats is what the Kafka-named gauges read (KafkaCollector).
	kstats *kafkaStats
	// pool is the current options and their idle workers; Reconfigure
	// swaps it while the threads are stopped.
	pool atomic.Pointer[workerPool]
	// throttle limits the I/O of every worker, across reconfigurations.
	throttle *throttle
	// reconfigure serializes Reconfigure calls.
	reconfigure sync.Mutex
	// checkpointWrite serializes checkpoint file writes, which share a
	// temporary file per dir, so the newest contents land last.
	checkpointWrite sync.Mutex

	mu struct {
		sync.Mutex
		inProgress  map[kafka.TopicPartition]bool
		checkpoints map[string]map[kafka.TopicPartition]int64 // per log dir
		horizons    map[kafka.TopicPartition]int64            // earliest pending delete horizon
		retryAt     map[kafka.TopicPartition]time.Time        // after a failed clean
		gauged      map[kafka.TopicPartition]bool             // partitions with a dirty ratio series
		cancel      context.CancelFunc
		done        chan struct{}
		// parent is Start's context, which Reconfigure starts the new
		// threads under.
		parent context.Context
	}
}

// workerPool is one configuration's workers.
type workerPool struct {
	opts Options
	// workers holds the idle workers: a clean leases one, so Threads bounds
	// the concurrent cleans and their memory.
	workers chan *worker
}

func newWorkerPool(opts Options, t *throttle) *workerPool {
	p := &workerPool{opts: opts, workers: make(chan *worker, opts.Threads)}
	for range opts.Threads {
		w := newWorker(opts)
		w.throttle = t
		p.workers <- w
	}
	return p
}

// New makes a cleaner over the logs of src. Nothing runs until Start;
// CleanOnce cleans synchronously (tests, tools). reg may be nil.
func New(fsys vfs.FS, src LogSource, opts Options, clk clock.Clock, reg prometheus.Registerer, logger *slog.Logger) (*Cleaner, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("log cleaner metrics: %w", err)
	}
	opts = opts.normalized()
	c := &Cleaner{fsys: fsys, logs: src, clk: clk, logger: logger, metrics: m,
		kstats: newKafkaStats(clk.Now()), throttle: newThrottle(clk, opts.IOMaxBytesPerSecond)}
	c.pool.Store(newWorkerPool(opts, c.throttle))
	c.mu.inProgress = map[kafka.TopicPartition]bool{}
	c.mu.checkpoints = map[string]map[kafka.TopicPartition]int64{}
	c.mu.horizons = map[kafka.TopicPartition]int64{}
	c.mu.retryAt = map[kafka.TopicPartition]time.Time{}
	c.mu.gauged = map[kafka.TopicPartition]bool{}
	return c, nil
}

// Start runs the cleaner threads until Stop or ctx ends. Calling it again
// while running does nothing.
func (c *Cleaner) Start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.cancel != nil {
		return
	}
	c.mu.parent = ctx
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	c.mu.cancel, c.mu.done = cancel, done
	opts := c.pool.Load().opts
	var wg sync.WaitGroup
	for i := range opts.Threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(ctx, i)
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	c.logger.Info("log cleaner started", "threads", opts.Threads, "dedupe_buffer_bytes", opts.DedupeBufferSize)
}

// Stop ends the threads, aborting cleans in progress (their .cleaned files
// are removed), and waits for them or ctx.
func (c *Cleaner) Stop(ctx context.Context) error {
	c.mu.Lock()
	cancel, done := c.mu.cancel, c.mu.done
	c.mu.cancel, c.mu.done = nil, nil
	c.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("stop log cleaner: %w", ctx.Err())
	}
	// Once every worker is idle, release their encoders (made again if the
	// cleaner restarts).
	p := c.pool.Load()
	idle := make([]*worker, 0, p.opts.Threads)
	defer func() {
		for _, w := range idle {
			p.workers <- w
		}
	}()
	for range p.opts.Threads {
		select {
		case w := <-p.workers:
			idle = append(idle, w)
		case <-ctx.Done(): // a CleanOnce of the caller's still runs
			return fmt.Errorf("stop log cleaner: %w", ctx.Err())
		}
	}
	for _, w := range idle {
		w.comp.close()
	}
	return nil
}

// run is one cleaner thread: clean while some log needs it, else back off.
func (c *Cleaner) run(ctx context.Context, thread int) {
	for ctx.Err() == nil {
		cleaned, err := c.CleanOnce(ctx)
		if err != nil && ctx.Err() == nil {
			c.logger.Warn("log cleaner pass failed", "thread", thread, "err", err)
		}
		if cleaned {
			continue
		}
		t := c.clk.NewTimer(c.pool.Load().opts.Backoff)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C():
		}
	}
}

// CleanOnce cleans the filthiest log, if one needs it, and reports whether
// it cleaned one. A clean that fails makes its log wait Backoff before the
// next attempt; the error is returned.
func (c *Cleaner) CleanOnce(ctx context.Context) (bool, error) {
	p := c.pool.Load()
	var w *worker
	select {
	case w = <-p.workers:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	defer func() { p.workers <- w }()
	now := c.clk.Now()
	cand, ok := c.grabFilthiest(now)
	if !ok {
		return false, nil
	}
	err := c.clean(ctx, w, cand, now)
	c.mu.Lock()
	delete(c.mu.inProgress, cand.log.TopicPartition())
	c.mu.Unlock()
	return err == nil, err
}

// clean cleans one chosen log and records the outcome.
func (c *Cleaner) clean(ctx context.Context, w *worker, cand candidate, now time.Time) error {
	l := cand.log
	tp := l.TopicPartition()
	// Real time, not c.clk: it only measures the work for the duration
	// metric and the logged rate.
	start := time.Now()
	res, err := w.cleanLog(ctx, l, cand.firstDirty, now)
	elapsed := time.Since(start)
	c.metrics.bytesRead.Add(float64(res.bytesRead))
	c.metrics.bytesWritten.Add(float64(res.bytesWritten))
	if err != nil {
		c.metrics.failures.Inc()
		if errors.Is(err, commitlog.ErrCleaningAborted) || ctx.Err() != nil {
			c.logger.Info("log clean aborted", "partition", tp.String(), "err", err)
			return err
		}
		c.mu.Lock()
		c.mu.retryAt[tp] = now.Add(c.pool.Load().opts.Backoff)
		c.mu.Unlock()
		c.kstats.failed(l, cand.dirtyBytes)
		return fmt.Errorf("clean %s: %w", tp, err)
	}
	c.kstats.cleaned(w, tp, res, elapsed)
	c.metrics.runs.Inc()
	c.metrics.duration.Observe(elapsed.Seconds())
	c.mu.Lock()
	if res.horizon >= 0 {
		c.mu.horizons[tp] = res.horizon
	} else {
		delete(c.mu.horizons, tp)
	}
	c.mu.Unlock()
	if err := c.updateCheckpoint(l, res.mapEnd); err != nil {
		c.logger.Warn("cannot write cleaner-offset-checkpoint", "partition", tp.String(), "err", err)
	}
	mbps := 0.0
	if elapsed > 0 {
		mbps = float64(res.bytesRead) / elapsed.Seconds() / (1 << 20)
	}
	c.logger.Info("cleaned log", "partition", tp.String(), "dirty_ratio", cand.ratio,
		"first_dirty", res.firstDirty, "cleaned_to", res.mapEnd,
		"segments_before", res.segmentsBefore, "segments_after", res.segments,
		"bytes_read", res.bytesRead, "bytes_written", res.bytesWritten,
		"records_read", res.stats.recordsRead, "records_kept", res.stats.recordsKept, "markers_removed", res.stats.markersRemoved,
		"seconds", elapsed.Seconds(), "read_mb_per_s", mbps)
	return nil
}

// candidate is a log chosen for cleaning.
type candidate struct {
	log        *commitlog.Log
	firstDirty int64
	ratio      float64
	dirtyBytes int64
}

// grabFilthiest picks the log to clean and marks it in progress (Kafka's
// LogCleanerManager.grabFilthiestCompactedLog).
func (c *Cleaner) grabFilthiest(now time.Time) (candidate, bool) {
	var best, tombstones candidate
	found, foundTombstones := false, false
	maxRatio, maxDelay := 0.0, time.Duration(0)
	gauged := map[kafka.TopicPartition]bool{}
	for _, l := range c.logs.Logs() {
		if l.Offline() {
			continue
		}
		opts := l.Options()
		tp := l.TopicPartition()
		labels := prometheus.Labels{"topic": tp.Topic, "partition": strconv.Itoa(int(tp.Partition))}
		if !opts.Compact {
			continue
		}
		st, err := l.CleanState()
		if err != nil {
			continue
		}
		firstDirty := c.firstDirtyOffset(l, st)
		clean, dirty := cleanableBytes(st, firstDirty, uncleanableOffset(st, opts, firstDirty, now))
		ratio := 0.0
		if clean+dirty > 0 {
			ratio = float64(dirty) / float64(clean+dirty)
		}
		c.metrics.dirtyRatio.With(labels).Set(ratio)
		gauged[tp] = true
		maxRatio = max(maxRatio, ratio)
		maxDelay = max(maxDelay, compactionDelay(st, opts, firstDirty, now))
		c.mu.Lock()
		busy := c.mu.inProgress[tp] || now.Before(c.mu.retryAt[tp])
		horizon, hasHorizon := c.mu.horizons[tp]
		c.mu.Unlock()
		if busy {
			continue
		}
		cand := candidate{log: l, firstDirty: firstDirty, ratio: ratio, dirtyBytes: dirty}
		if dirty > 0 && (ratio > opts.MinCleanableDirtyRatio || overdue(st, opts, firstDirty, now)) {
			if !found || ratio > best.ratio {
				best, found = cand, true
			}
		} else if hasHorizon && horizon <= now.UnixMilli() && !foundTombstones {
			tombstones, foundTombstones = cand, true
		}
	}
	c.kstats.checked(now, maxRatio, maxDelay)
	c.pruneGauges(gauged)
	c.kstats.prune(gauged)
	if !found {
		// Nothing dirty enough: use the quiet time to drop tombstones
		// whose delete horizon passed, as Kafka does.
		best, found = tombstones, foundTombstones
	}
	if !found {
		return candidate{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	tp := best.log.TopicPartition()
	if c.mu.inProgress[tp] {
		return candidate{}, false
	}
	c.mu.inProgress[tp] = true
	return best, true
}

// pruneGauges drops the dirty ratio series of partitions that are gone or
// no longer compacted.
func (c *Cleaner) pruneGauges(current map[kafka.TopicPartition]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for tp := range c.mu.gauged {
		if !current[tp] {
			c.metrics.dirtyRatio.DeleteLabelValues(tp.Topic, strconv.Itoa(int(tp.Partition)))
		}
	}
	c.mu.gauged = current
}

// cleanableBytes sums the segments already clean (below firstDirty) and
// dirty (from firstDirty to uncleanable).
func cleanableBytes(st commitlog.CleanState, firstDirty, uncleanable int64) (clean, dirty int64) {
	for _, s := range st.Segments {
		switch {
		case s.NextOffset <= firstDirty:
			clean += s.Size
		case s.BaseOffset < uncleanable && s.NextOffset > firstDirty:
			dirty += s.Size
		}
	}
	return clean, dirty
}

// overdue reports whether the oldest dirty data is older than
// max.compaction.lag.ms (Kafka's needCompactionNow).
func overdue(st commitlog.CleanState, opts commitlog.Options, firstDirty int64, now time.Time) bool {
	if opts.MaxCompactionLag <= 0 || opts.MaxCompactionLag >= 1<<62 {
		return false
	}
	cutoff := now.Add(-opts.MaxCompactionLag).UnixMilli()
	for _, s := range st.Segments {
		if s.NextOffset > firstDirty {
			return s.FirstBatchTimestamp >= 0 && s.FirstBatchTimestamp < cutoff
		}
	}
	return false
}

// firstDirtyOffset is the log's cleaner checkpoint, reset to the log start
// offset when it lies outside the log (a truncated or recreated log).
func (c *Cleaner) firstDirtyOffset(l *commitlog.Log, st commitlog.CleanState) int64 {
	dir := filepath.Dir(l.Dir())
	c.mu.Lock()
	defer c.mu.Unlock()
	offsets := c.checkpointsLocked(dir)
	cp, ok := offsets[l.TopicPartition()]
	if !ok || cp < st.LogStartOffset || cp > st.LogEndOffset {
		return st.LogStartOffset
	}
	return cp
}

// checkpointsLocked returns a log dir's checkpoint, read on first use.
func (c *Cleaner) checkpointsLocked(dir string) map[kafka.TopicPartition]int64 {
	if m, ok := c.mu.checkpoints[dir]; ok {
		return m
	}
	m, err := checkpoint.Read(c.fsys, filepath.Join(dir, checkpoint.CleanerOffsetFile))
	if err != nil {
		if !vfs.IsNotExist(err) {
			c.logger.Warn("ignoring unreadable cleaner-offset-checkpoint", "dir", dir, "err", err)
		}
		m = map[kafka.TopicPartition]int64{}
	}
	c.mu.checkpoints[dir] = m
	return m
}

// updateCheckpoint records that l is clean below offset and rewrites its
// dir's cleaner-offset-checkpoint, without partitions no longer there.
func (c *Cleaner) updateCheckpoint(l *commitlog.Log, offset int64) error {
	dir := filepath.Dir(l.Dir())
	c.checkpointWrite.Lock()
	defer c.checkpointWrite.Unlock()
	present := map[kafka.TopicPartition]bool{}
	for _, other := range c.logs.Logs() {
		if filepath.Dir(other.Dir()) == dir {
			present[other.TopicPartition()] = true
		}
	}
	c.mu.Lock()
	offsets := c.checkpointsLocked(dir)
	offsets[l.TopicPartition()] = offset
	snapshot := make(map[kafka.TopicPartition]int64, len(offsets))
	for tp, off := range offsets {
		if present[tp] {
			snapshot[tp] = off
		} else {
			delete(offsets, tp)
		}
	}
	c.mu.Unlock()
	return checkpoint.Write(c.fsys, filepath.Join(dir, checkpoint.CleanerOffsetFile), snapshot)
}

// TruncateCheckpoint lowers the cleaner checkpoint of tp to offset when a
// log is truncated below it (a follower after a leader change), so the
// data appended again is cleaned.
func (c *Cleaner) TruncateCheckpoint(l *commitlog.Log, offset int64) error {
	dir := filepath.Dir(l.Dir())
	c.checkpointWrite.Lock()
	defer c.checkpointWrite.Unlock()
	c.mu.Lock()
	offsets := c.checkpointsLocked(dir)
	cp, ok := offsets[l.TopicPartition()]
	if !ok || cp <= offset {
		c.mu.Unlock()
		return nil
	}
	offsets[l.TopicPartition()] = offset
	snapshot := make(map[kafka.TopicPartition]int64, len(offsets))
	for tp, off := range offsets {
		snapshot[tp] = off
	}
	c.mu.Unlock()
	return checkpoint.Write(c.fsys, filepath.Join(dir, checkpoint.CleanerOffsetFile), snapshot)
}
