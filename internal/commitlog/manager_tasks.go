package commitlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// periodicTask is one of the Manager's scheduled jobs.
type periodicTask struct {
	name     string
	interval time.Duration
	run      func(now time.Time) error
	last     time.Time
	// own runs the task in its own goroutine, so that its length (the
	// tail flush's fsyncs over thousands of logs) delays no other task; a
	// tick finding it still running skips it.
	own     bool
	running atomic.Bool
}

// Start runs the periodic tasks in one goroutine until Close (or ctx ends).
// Calling it again does nothing.
func (m *Manager) Start(ctx context.Context) {
	if m.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	m.stop = cancel
	m.done = make(chan struct{})
	tasks := []*periodicTask{
		{name: "retention", interval: m.opts.RetentionCheckInterval, run: m.RunRetention},
		{name: "flush", interval: m.opts.FlushCheckInterval, run: m.RunFlush},
		{name: "recovery-point-checkpoint", interval: m.opts.RecoveryPointCheckpointInterval, run: func(time.Time) error { return m.flushTailsAndCheckpoint(ctx) }, own: true},
		{name: "log-start-checkpoint", interval: m.opts.LogStartCheckpointInterval, run: func(time.Time) error { return m.CheckpointLogStartOffsets() }},
		{name: "delete-files", interval: m.opts.DeleteCheckInterval, run: m.RemoveDeletedSegments},
		{name: "producer-expiration", interval: m.opts.ProducerIDExpirationCheckInterval, run: m.RemoveExpiredProducers},
	}
	tick := time.Second
	for _, t := range tasks {
		if t.interval > 0 && t.interval < tick {
			tick = max(t.interval, 10*time.Millisecond)
		}
		t.last = m.clk.Now()
	}
	go func() {
		defer close(m.done)
		var own sync.WaitGroup
		defer own.Wait()
		moverDone := make(chan struct{})
		go func() { m.runMover(ctx); close(moverDone) }()
		defer func() { <-moverDone }()
		ticker := m.clk.NewTicker(tick)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C():
			}
			now := m.clk.Now()
			for _, t := range tasks {
				if t.interval <= 0 || now.Sub(t.last) < t.interval {
					continue
				}
				t.last = now
				if !t.own {
					m.runTask(t, now)
				} else if t.running.CompareAndSwap(false, true) {
					own.Go(func() { m.runTask(t, now); t.running.Store(false) })
				}
			}
		}
	}()
}

func (m *Manager) runTask(t *periodicTask, now time.Time) {
	if err := t.run(now); err != nil {
		m.logger.Warn("log manager task failed", "task", t.name, "err", err)
	}
}

// onlineLogs returns the logs not known to be offline.
func (m *Manager) onlineLogs() []*Log {
	var out []*Log
	for _, l := range m.Logs() {
		if !l.Offline() {
			out = append(out, l)
		}
	}
	return out
}

// RunRetention applies retention to every log (log.retention.check.interval.ms).
func (m *Manager) RunRetention(now time.Time) error {
	var errs []error
	for _, l := range m.onlineLogs() {
		if _, err := l.ApplyRetention(now); err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RunFlush flushes the logs whose flush.ms has passed.
func (m *Manager) RunFlush(now time.Time) error {
	var errs []error
	for _, l := range m.onlineLogs() {
		if err := l.FlushIfDue(now); err != nil && !errors.Is(err, ErrClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RemoveDeletedSegments removes files of deleted segments, and directories
// of deleted logs, whose delay passed.
func (m *Manager) RemoveDeletedSegments(now time.Time) error {
	errs := []error{m.removeRetiredLogs(now, false)}
	for _, l := range m.Logs() {
		errs = append(errs, l.RemoveDeletedSegments(now))
	}
	return errors.Join(errs...)
}

// RemoveExpiredProducers drops idle producers from every log.
func (m *Manager) RemoveExpiredProducers(now time.Time) error {
	for _, l := range m.onlineLogs() {
		l.RemoveExpiredProducers(now, m.opts.ProducerIDExpiration)
	}
	return nil
}

// tailFlushWorkers is how many logs a checkpoint tick flushes, and Close
// closes, at once: fsyncs wait on the device, which serves several at a
// time.
var tailFlushWorkers = 8

// FlushTailsAndCheckpoint syncs every online log that took at least
// TailFlushMinBytes since its last tail flush up to its log end offset
// (FlushTail, outside the logs' locks, tailFlushWorkers logs at a time),
// then writes the recovery-point checkpoints: a crash then re-validates
// at most one interval's writes, or TailFlushMinBytes, per log.
func (m *Manager) FlushTailsAndCheckpoint() error {
	return m.flushTailsAndCheckpoint(context.Background())
}

// flushTailsAndCheckpoint stops flushing tails when ctx ends (Close):
// the checkpoint then vouches for the tails flushed so far.
func (m *Manager) flushTailsAndCheckpoint(ctx context.Context) error {
	logs := m.onlineLogs()
	errs := make([]error, len(logs))
	inParallel(len(logs), func(i int) {
		if ctx.Err() != nil {
			return
		}
		if err := logs[i].flushTailOver(m.opts.TailFlushMinBytes); err != nil && !errors.Is(err, ErrClosed) {
			errs[i] = err
		}
	})
	return errors.Join(append(errs, m.CheckpointRecoveryPoints())...)
}

// CheckpointRecoveryPoints writes each online dir's recovery-point-offset-checkpoint.
func (m *Manager) CheckpointRecoveryPoints() error {
	return m.writeCheckpoints(checkpoint.RecoveryPointFile, (*Log).RecoveryPoint)
}

// CheckpointLogStartOffsets writes each online dir's log-start-offset-checkpoint.
func (m *Manager) CheckpointLogStartOffsets() error {
	return m.writeCheckpoints(checkpoint.LogStartOffsetFile, (*Log).LogStartOffset)
}

func (m *Manager) writeCheckpoints(name string, value func(*Log) int64) error {
	// One writer at a time: a checkpoint whose values were read before a
	// truncation must not land after the one written for it.
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	m.mu.Lock()
	perDir := map[string]map[kafka.TopicPartition]int64{}
	for _, d := range m.opts.Dirs {
		if _, off := m.mu.offline[d]; !off {
			perDir[d] = map[kafka.TopicPartition]int64{}
		}
	}
	logs := map[*Log]string{}
	for tp, d := range m.mu.dirOf {
		logs[m.mu.logs[tp]] = d
	}
	for _, f := range m.mu.futures {
		logs[f.log] = f.dir // a future's offsets are keyed by its partition in its own dir, as Kafka's
	}
	m.mu.Unlock()
	for l, d := range logs {
		if offs, ok := perDir[d]; ok {
			offs[l.tp] = value(l)
		}
	}
	var errs []error
	for d, offs := range perDir {
		if err := checkpoint.Write(m.fsys, filepath.Join(d, name), offs); err != nil {
			m.markDirOffline(d)
			errs = append(errs, fmt.Errorf("write %s in %s: %w", name, d, err))
		}
	}
	return errors.Join(errs...)
}

// Close stops the scheduler, closes every log (flushing it), writes the
// checkpoints and, in each dir where all went well, the clean-shutdown
// marker, so the next start skips recovery.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return nil
	}
	m.mu.closed = true
	m.mu.Unlock()
	if m.stop != nil {
		m.stop()
		<-m.done
	}
	m.flusher.close() // runs the queued roll flushes before the logs close
	failed := m.closeLogs()
	if err := m.removeRetiredLogs(m.clk.Now(), true); err != nil {
		m.logger.Warn("removing deleted logs", "err", err)
	}
	errs := []error{m.CheckpointRecoveryPoints(), m.CheckpointLogStartOffsets()}
	for _, d := range m.opts.Dirs {
		m.mu.Lock()
		_, off := m.mu.offline[d]
		m.mu.Unlock()
		if off || failed[d] {
			continue
		}
		marker := filepath.Join(d, CleanShutdownFile)
		if err := vfs.WriteFileAtomic(m.fsys, marker, nil); err != nil {
			errs = append(errs, fmt.Errorf("write clean shutdown marker in %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// closeLogs closes every log and reports the dirs where one failed.
func (m *Manager) closeLogs() map[string]bool {
	m.mu.Lock()
	logs := map[*Log]string{}
	for tp, d := range m.mu.dirOf {
		logs[m.mu.logs[tp]] = d
	}
	for _, f := range m.mu.futures {
		logs[f.log] = f.dir
	}
	m.mu.Unlock()
	list := make([]*Log, 0, len(logs))
	for l := range logs {
		list = append(list, l)
	}
	// Each close flushes its log: several fsyncs, which the device serves
	// several at a time (10,000 logs one after another took 20 s).
	bad := make([]bool, len(list))
	inParallel(len(list), func(i int) {
		l := list[i]
		if err := l.Close(); err != nil {
			m.logger.Error("closing log failed", "partition", l.tp.String(), "err", err)
			bad[i] = true
		}
		// A failed dir gets no clean-shutdown marker; a log stopped on
		// its own (a lost segment) closed cleanly.
		bad[i] = bad[i] || l.offline.Load()
	})
	failed := map[string]bool{}
	for i, l := range list {
		if bad[i] {
			failed[logs[l]] = true
		}
	}
	return failed
}

// inParallel runs fn(0..n-1) on up to tailFlushWorkers goroutines: work
// that waits on fsyncs, which the device serves several at a time.
func inParallel(n int, fn func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(tailFlushWorkers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}
