package commitlog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// moveFetchBytes is how much one copy step reads from the current log
// (Kafka's alter-log-dirs thread fetches replica.fetch.max.bytes, 1 MiB).
const moveFetchBytes = 1 << 20

// moveIdle is how often the mover looks for work when not woken.
const moveIdle = 200 * time.Millisecond

// wakeMover tells the mover goroutine a future log was created.
func (m *Manager) wakeMover() {
	select {
	case m.moverWake <- struct{}{}:
	default:
	}
}

// runMover copies every future log until it replaces its current log, in
// one goroutine (Kafka runs num.replica.alter.log.dirs.threads).
func (m *Manager) runMover(ctx context.Context) {
	ticker := m.clk.NewTicker(moveIdle)
	defer ticker.Stop()
	for {
		busy := false
		for _, tp := range m.futurePartitions() {
			if ctx.Err() != nil {
				return
			}
			progressed, err := m.StepFuture(tp)
			if err != nil && !errors.Is(err, ErrClosed) {
				m.logger.Warn("moving partition between log dirs", "partition", tp.String(), "err", err)
			}
			busy = busy || progressed
		}
		if busy {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-m.moverWake:
		case <-ticker.C():
		}
	}
}

func (m *Manager) futurePartitions() []kafka.TopicPartition {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]kafka.TopicPartition, 0, len(m.mu.futures))
	for tp := range m.mu.futures {
		out = append(out, tp)
	}
	return out
}

// StepFuture takes one step of the copy of tp into its future log
// (PlanCopy), swapping it in once caught up. progressed says whether it
// did something worth another step at once.
func (m *Manager) StepFuture(tp kafka.TopicPartition) (progressed bool, err error) {
	m.moveMu.Lock()
	defer m.moveMu.Unlock()
	m.mu.Lock()
	cur, f := m.mu.logs[tp], m.mu.futures[tp]
	m.mu.Unlock()
	if cur == nil || f == nil || cur.Offline() || f.log.Offline() {
		return false, nil // stalled until the dir or the partition comes back
	}
	v := CopyView{CurStart: cur.LogStartOffset(), CurEnd: cur.LogEndOffset(),
		FutStart: f.log.LogStartOffset(), FutEnd: f.log.LogEndOffset(), FutEpochEnd: -1}
	if e, ok := f.log.LatestEpoch(); ok {
		_, v.FutEpochEnd = cur.EndOffsetForEpoch(e)
	}
	act, off := PlanCopy(v)
	switch act {
	case CopyStartAt:
		err = f.log.TruncateFullyAndStartAt(off)
	case CopyTruncate:
		err = f.log.TruncateTo(off)
	case CopyAdvanceStart:
		err = f.log.IncrementLogStartOffset(off)
	case CopyRecords:
		err = m.copyRecords(cur, f.log, off, v.CurEnd)
	case CopySwap:
		return m.replaceCurrentWithFuture(tp, cur, f)
	}
	if err != nil {
		return false, fmt.Errorf("%s at %d: %w", act, off, err)
	}
	return true, nil
}

// copyRecords appends to the future log the batches of cur from offset.
func (m *Manager) copyRecords(cur, fut *Log, offset, end int64) error {
	r, err := cur.Read(offset, moveFetchBytes, end, true)
	if errors.Is(err, ErrOffsetOutOfRange) {
		return nil // the current log moved under us: the next plan sees it
	}
	if err != nil {
		return err
	}
	b, err := r.Bytes()
	if err != nil {
		return err
	}
	if len(b) == 0 {
		return fmt.Errorf("nothing to copy at %d below the log end offset %d", offset, end)
	}
	_, err = fut.AppendAsFollower(b)
	return err
}

// replaceCurrentWithFuture swaps the future log in if it still ends where
// the current one does, holding the current log's lock so no append or
// truncation slips between the check and the swap (Kafka's
// Partition.maybeReplaceCurrentWithFutureReplica). On disk: the current
// log's dir is renamed "<tp>.<id>-delete", then the future's renamed
// "<tp>": a crash between the two is completed at start-up (PlanStartup).
// Kafka renames in the other order and refuses to start on the duplicate
// a crash between them leaves.
func (m *Manager) replaceCurrentWithFuture(tp kafka.TopicPartition, cur *Log, f *futureLog) (bool, error) {
	if err := f.log.Flush(); err != nil {
		return false, err
	}
	cur.mu.Lock()
	defer cur.mu.Unlock()
	if err := cur.checkUsableLocked(); err != nil {
		return false, err
	}
	if cur.activeLocked().nextOffset != f.log.LogEndOffset() {
		return true, nil // appended meanwhile: copy more
	}
	start := cur.mu.logStartOffset
	if err := f.log.Close(); err != nil {
		return false, fmt.Errorf("close future log: %w", err)
	}
	m.mu.Lock()
	srcDir := m.mu.dirOf[tp]
	m.mu.Unlock()
	curPath, futPath := cur.Dir(), f.log.Dir()
	oldPath := filepath.Join(srcDir, fmt.Sprintf("%s.%s-delete", tp, f.id))
	newPath := filepath.Join(f.dir, tp.String())
	if err := m.renameSynced(curPath, oldPath); err != nil {
		m.forgetFuture(tp, f)
		return false, m.moveFailed(srcDir, err)
	}
	if err := m.renameSynced(futPath, newPath); err != nil {
		// The start-up plan completes this rename; until then the
		// partition is offline here.
		cur.offline.Store(true)
		m.forgetFuture(tp, f)
		return false, m.moveFailed(f.dir, err)
	}
	n, err := Open(m.fsys, newPath, tp, cur.mu.opts, m.clk, StartState{CleanShutdown: true, LogStartOffset: start}, m.logger)
	if err != nil {
		cur.offline.Store(true)
		m.forgetFuture(tp, f)
		return false, m.moveFailed(f.dir, err)
	}
	old := cur.adoptLocked(n, oldPath)
	m.mu.Lock()
	m.dropFutureLocked(tp)
	m.setDirLocked(tp, f.dir)
	m.mu.retired = append(m.mu.retired, retiredLog{log: old, at: m.clk.Now().Add(cur.mu.opts.FileDeleteDelay)})
	m.mu.Unlock()
	m.logger.Info("partition moved to another log dir", "partition", tp.String(), "from", srcDir, "to", f.dir,
		"log_end_offset", cur.activeLocked().nextOffset)
	return false, nil
}

func (m *Manager) forgetFuture(tp kafka.TopicPartition, f *futureLog) {
	m.mu.Lock()
	if m.mu.futures[tp] == f {
		m.dropFutureLocked(tp)
	}
	m.mu.Unlock()
}

// moveFailed takes dir offline after an I/O error of the swap.
func (m *Manager) moveFailed(dir string, err error) error {
	m.markDirOffline(dir)
	return fmt.Errorf("%w: swap future log: %w", ErrOffline, err)
}

func (m *Manager) renameSynced(from, to string) error {
	if err := m.fsys.Rename(from, to); err != nil {
		return fmt.Errorf("rename %s: %w", from, err)
	}
	if err := m.fsys.SyncDir(filepath.Dir(to)); err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Dir(to), err)
	}
	return nil
}
