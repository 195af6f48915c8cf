package commitlog

// adoptLocked makes l serve n, the future log reopened at its final place,
// and returns a retired Log holding l's previous files, whose directory was
// renamed oldDir (Delete removes it). l keeps its identity, callbacks,
// options and high watermark, so the replica holding it goes on without
// knowing (Kafka swaps the Partition's log reference instead). n must be
// unpublished; l.mu is held for writing.
func (l *Log) adoptLocked(n *Log, oldDir string) *Log {
	old := &Log{fsys: l.fsys, tp: l.tp, clk: l.clk, logger: l.logger, rng: l.rng}
	old.dir.Store(&oldDir)
	old.mu.opts = l.mu.opts
	old.mu.segments, old.mu.pendingDeletes = l.mu.segments, l.mu.pendingDeletes
	old.mu.producers, old.mu.epochs = l.mu.producers, l.mu.epochs
	old.mu.closed, old.mu.retiredDir = true, oldDir

	newDir := n.Dir()
	l.dir.Store(&newDir)
	l.mu.segments = n.mu.segments
	l.mu.logStartOffset = max(l.mu.logStartOffset, n.mu.logStartOffset)
	l.mu.recoveryPoint = n.mu.recoveryPoint
	l.mu.unflushedMessages, l.mu.lastFlush = 0, n.mu.lastFlush
	l.mu.pendingDeletes = n.mu.pendingDeletes
	l.mu.producers, l.mu.epochs, l.mu.gap = n.mu.producers, n.mu.epochs, n.mu.gap
	if l.mu.highWatermark >= 0 {
		l.mu.producers.OnHighWatermarkUpdated(l.mu.highWatermark)
	}
	return old
}
