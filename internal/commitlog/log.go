package commitlog

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/epoch"
	"github.com/sluice-io/sluice/internal/commitlog/producerstate"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Log is one partition's segmented log. Appends, truncation, rolls and
// deletions hold mu for writing; reads hold it only to take a snapshot of
// the segment list and then read files positionally without it.
type Log struct {
	fsys vfs.FS
	// dir is the partition directory; a move between log dirs
	// (ReplaceCurrentWithFuture) changes it under mu's write lock, and
	// it is atomic because the offline callbacks read it holding mu.
	dir    atomic.Pointer[string]
	tp     kafka.TopicPartition
	clk    clock.Clock
	logger *slog.Logger
	rng    *rand.Rand

	offline   atomic.Bool
	onOffline func(error) // set by the Manager: takes the log dir offline
	// decoder reads records (timestamp lookups, the cleaner, Validate); set
	// by the Manager, nil is the default per-batch cap and no budget.
	decoder *records.Decoder
	// corrupt holds the damaged places already reported (corruptionKey);
	// onCorrupt, set by the Manager, counts each in its metric.
	corrupt   sync.Map
	onCorrupt func(*CorruptBatchError)
	// stopped is why this log alone was taken out of service (nil: it
	// was not); see stop.
	stopped atomic.Pointer[error]
	// full is set from a failed append for lack of space to the next
	// append that succeeds; onFull, set by the Manager, logs the episode
	// once per log dir (without it the log logs its own).
	full   atomic.Bool
	onFull func(full bool, err error)
	// onRoll, set by the Manager, queues the flush of what a roll sealed
	// (Kafka's "flush-log" task) so that no fsync runs under mu; without
	// it (a log opened alone) the roll flushes synchronously.
	onRoll func(rollFlush)
	// onTruncated, set by the Manager, writes the recovery-point
	// checkpoint after a truncation lowered the recovery point (Kafka's
	// LogManager.truncateTo does): a checkpoint still holding the old
	// value would make recovery trust the bytes appended after the
	// truncation below it, which nothing synced.
	onTruncated func()

	mu struct {
		sync.RWMutex
		opts           Options
		segments       []*segment // ascending base offset; the last is active; replaced, never mutated
		logStartOffset int64
		// Invariant: every batch below recoveryPoint, its segment's
		// indexes and the directory entries naming them are fsynced; it
		// only moves after the syncs (Flush, flushRolled), never ahead.
		recoveryPoint int64
		// truncations counts the truncations (TruncateTo,
		// TruncateFullyAndStartAt): a background flush (FlushTail) moves
		// the recovery point only if none happened while it synced.
		truncations uint64
		// tailBytes counts the bytes appended since a tail flush last
		// observed the log: the checkpoint tick skips logs with fewer
		// than ManagerOptions.TailFlushMinBytes, cheaper to re-validate
		// after a crash than to sync.
		tailBytes         int64
		highWatermark     int64 // bound for retention; -1 until replication sets it
		unflushedMessages int64
		lastFlush         time.Time
		pendingDeletes    []pendingDelete
		closed            bool
		retiredDir        string // where Retire moved the directory
		filesClosed       bool   // Close or Delete closed every file
		producers         *producerstate.Manager
		epochs            *epoch.Cache
		gap               *MissingSegmentError // found by Open, judged by checkGapLocked
		// gapUnflushed says gap lies above the recovery point of an unclean
		// stop: the crash's doing (a roll's background flush had not
		// synced the segment before it), not a lost segment.
		gapUnflushed bool
	}
}

// pendingDelete is a segment renamed .deleted whose files are removed once
// file.delete.delay.ms has passed, so reads already holding it complete.
type pendingDelete struct {
	seg *segment
	at  time.Time
}

// AppendInfo describes an append.
type AppendInfo struct {
	FirstOffset int64
	LastOffset  int64
	// MaxTimestamp and OffsetOfMaxTimestamp are over the appended batches.
	MaxTimestamp         int64
	OffsetOfMaxTimestamp int64
	LogStartOffset       int64
	Batches              int
	Bytes                int
	// Duplicate says the append repeated an idempotent producer's batch:
	// nothing was written and the offsets are the original's.
	Duplicate bool
}

// SegmentInfo describes one segment (DescribeLogDirs, tooling).
type SegmentInfo struct {
	BaseOffset   int64
	NextOffset   int64
	Size         int64
	MaxTimestamp int64
}

// TopicPartition returns the partition the log holds.
func (l *Log) TopicPartition() kafka.TopicPartition { return l.tp }

// Dir returns the partition directory.
func (l *Log) Dir() string { return *l.dir.Load() }

// Options returns the log's current options.
func (l *Log) Options() Options {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.opts
}

// SetOptions replaces the options (a topic config change); they apply from
// the next append, roll or retention check.
// The first call after an Open with the broker's defaults also decides
// whether a hole between segments is a lost segment (see checkGapLocked).
func (l *Log) SetOptions(opts Options) {
	l.mu.Lock()
	l.mu.opts = opts.normalized()
	l.checkGapLocked()
	l.mu.Unlock()
}

// Offline reports whether the log serves nothing: its directory failed, or
// the log was stopped (OfflineErr says why).
func (l *Log) Offline() bool { return l.offline.Load() || l.stopped.Load() != nil }

// LogStartOffset is the first offset the log serves.
func (l *Log) LogStartOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.logStartOffset
}

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.activeLocked().nextOffset
}

// RecoveryPoint is the offset below which the log is known durable.
func (l *Log) RecoveryPoint() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.recoveryPoint
}

// SetHighWatermark tells the log the partition's high watermark: retention
// and log start offset moves never go beyond it. Until it is called they are
// bounded by the log end offset (a log without replication).
func (l *Log) SetHighWatermark(hw int64) {
	l.mu.Lock()
	l.mu.highWatermark = hw
	l.mu.producers.OnHighWatermarkUpdated(hw)
	l.mu.Unlock()
}

// Segments describes the segments, oldest first.
func (l *Log) Segments() []SegmentInfo {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make([]SegmentInfo, len(l.mu.segments))
	for i, s := range l.mu.segments {
		out[i] = SegmentInfo{BaseOffset: s.baseOffset, NextOffset: s.nextOffset, Size: s.size.Load(), MaxTimestamp: s.maxTimestamp}
	}
	return out
}

// Size is the total size of the segments in bytes.
func (l *Log) Size() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var n int64
	for _, s := range l.mu.segments {
		n += s.size.Load()
	}
	return n
}

func (l *Log) activeLocked() *segment { return l.mu.segments[len(l.mu.segments)-1] }

// checkUsableLocked refuses operations on a closed or offline log.
func (l *Log) checkUsableLocked() error {
	if l.mu.closed {
		return ErrClosed
	}
	return l.OfflineErr()
}

// ioFailure classifies an I/O error of a mutation: a full disk fails only
// the operation (ErrStorage); anything else takes the log offline, as
// Kafka's LogDirFailureChannel does, because the file state is unknown.
func (l *Log) ioFailure(op string, err error) error {
	if isNoSpace(err) {
		l.noSpace(err)
		return fmt.Errorf("%s %s: %w: %w", op, l.tp, ErrStorage, err)
	}
	l.markOffline(err)
	return fmt.Errorf("%s %s: %w: %w", op, l.tp, ErrOffline, err)
}

func (l *Log) markOffline(err error) {
	if l.offline.Swap(true) {
		return
	}
	l.logger.Error("log directory failure; partition offline", "partition", l.tp.String(), "err", err)
	if l.onOffline != nil {
		l.onOffline(err)
	}
}

// parseAppend splits bytes into whole batches, checking each CRC and that
// nothing but whole batches is present.
func parseAppend(batches []byte, maxMessageBytes int) ([]records.Header, error) {
	var headers []records.Header
	rest, err := records.Batches(batches, func(h records.Header, b []byte) error {
		if err := records.CheckCRC(b); err != nil {
			return err
		}
		if h.LastOffsetDelta < 0 || h.RecordCount < 0 {
			return fmt.Errorf("batch with last offset delta %d, %d records", h.LastOffsetDelta, h.RecordCount)
		}
		if maxMessageBytes > 0 && len(b) > maxMessageBytes {
			return fmt.Errorf("%w: %d bytes, max.message.bytes %d", ErrRecordBatchTooLarge, len(b), maxMessageBytes)
		}
		headers = append(headers, h)
		return nil
	})
	if err != nil {
		if errors.Is(err, ErrRecordBatchTooLarge) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrCorruptBatch, err)
	}
	if rest != len(batches) {
		return nil, fmt.Errorf("%w: %d trailing bytes are not a whole batch", ErrCorruptBatch, len(batches)-rest)
	}
	if len(headers) == 0 {
		return nil, fmt.Errorf("%w: no batches", ErrCorruptBatch)
	}
	return headers, nil
}

// Append appends a leader's batches (already validated by records.Validate):
// it assigns offsets from the log end offset by rewriting each base offset
// and stamps leaderEpoch into each batch, in place in batches (both fields
// are outside the CRC).
//
// Batches of idempotent or transactional producers are checked against the
// producer state; when a batch repeats one already written, nothing is
// written and the info carries the original's offsets (Duplicate set).
// Transactional batches need no verification (see AppendVerified).
func (l *Log) Append(batches []byte, leaderEpoch int32) (AppendInfo, error) {
	return l.appendAsLeader(batches, leaderEpoch, appendChecks{origin: producerstate.OriginClient})
}

// AppendAsCoordinator is Append for the group and transaction coordinators'
// writes (offset commits, transaction markers): producer epochs are checked,
// sequences are not, as Kafka's AppendOrigin.COORDINATOR.
func (l *Log) AppendAsCoordinator(batches []byte, leaderEpoch int32) (AppendInfo, error) {
	return l.appendAsLeader(batches, leaderEpoch, appendChecks{origin: producerstate.OriginCoordinator})
}

// appendChecks are the producer-state checks of a leader's append.
type appendChecks struct {
	origin producerstate.Origin
	// verify requires KIP-890 verification with guard (AppendVerified).
	verify bool
	guard  VerificationGuard
	// markerVersion is the transaction version a marker was written with
	// (WriteTxnMarkers v2+); the log does not record it.
	markerVersion int16
}

func (l *Log) appendAsLeader(batches []byte, leaderEpoch int32, checks appendChecks) (AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return AppendInfo{}, err
	}
	headers, err := parseAppend(batches, l.mu.opts.MaxMessageBytes)
	if err != nil {
		return AppendInfo{}, err
	}
	return l.appendAsLeaderLocked(batches, headers, leaderEpoch, checks)
}

// appendAsLeaderLocked is a leader's append of batches whose headers were
// parsed and CRCs checked (parseAppend, or records.Validate for a
// Validated).
func (l *Log) appendAsLeaderLocked(batches []byte, headers []records.Header, leaderEpoch int32, checks appendChecks) (AppendInfo, error) {
	next := l.activeLocked().nextOffset
	pos := 0
	for i := range headers {
		h := &headers[i]
		b := batches[pos : pos+int(h.Size())]
		records.SetBaseOffset(b, next)
		records.SetPartitionLeaderEpoch(b, leaderEpoch)
		h.BaseOffset, h.PartitionLeaderEpoch = next, leaderEpoch
		next = h.NextOffset()
		pos += int(h.Size())
	}
	staged, dup, err := l.stageProducers(checks, batches, headers)
	if err != nil {
		return AppendInfo{}, err
	}
	if dup != nil {
		return AppendInfo{FirstOffset: dup.FirstOffset, LastOffset: dup.LastOffset, MaxTimestamp: dup.Timestamp,
			OffsetOfMaxTimestamp: dup.LastOffset, LogStartOffset: l.mu.logStartOffset, Duplicate: true}, nil
	}
	return l.appendLocked(batches, headers, staged)
}

// AppendAsFollower appends batches copied from the leader, keeping their
// offsets and epochs. The first must start at or after the log end offset
// and offsets must increase (compaction can leave gaps).
func (l *Log) AppendAsFollower(batches []byte) (AppendInfo, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return AppendInfo{}, err
	}
	headers, err := parseAppend(batches, 0)
	if err != nil {
		return AppendInfo{}, err
	}
	next := l.activeLocked().nextOffset
	for _, h := range headers {
		if h.BaseOffset < next {
			return AppendInfo{}, fmt.Errorf("%w: batch at %d, log end offset %d", ErrOutOfOrderOffsets, h.BaseOffset, next)
		}
		next = h.NextOffset()
	}
	staged, _, err := l.stageProducers(appendChecks{origin: producerstate.OriginReplication}, batches, headers)
	if err != nil {
		return AppendInfo{}, err
	}
	return l.appendLocked(batches, headers, staged)
}

// appendLocked rolls when needed and writes the batches to the active segment.
func (l *Log) appendLocked(batches []byte, headers []records.Header, staged *producerstate.Append) (AppendInfo, error) {
	opts := l.mu.opts
	info := AppendInfo{FirstOffset: headers[0].BaseOffset, LastOffset: headers[len(headers)-1].LastOffset(),
		MaxTimestamp: -1, OffsetOfMaxTimestamp: headers[0].BaseOffset, Batches: len(headers), Bytes: len(batches)}
	var messages int64
	for _, h := range headers {
		if h.MaxTimestamp > info.MaxTimestamp {
			info.MaxTimestamp, info.OffsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
		messages += int64(h.LastOffsetDelta) + 1
	}
	if int64(len(batches)) > opts.SegmentBytes {
		return AppendInfo{}, fmt.Errorf("%w: %d bytes exceed segment.bytes %d", ErrRecordBatchTooLarge, len(batches), opts.SegmentBytes)
	}
	now := l.clk.Now()
	seg := l.activeLocked()
	if seg.shouldRoll(opts, int64(len(batches)), info.MaxTimestamp, info.LastOffset, now) {
		var err error
		if seg, err = l.rollLocked(info.FirstOffset); err != nil {
			return AppendInfo{}, err
		}
	}
	if err := seg.append(batches, headers, opts); err != nil {
		return AppendInfo{}, l.ioFailure("append", err)
	}
	if err := recordAborts(seg, staged.Commit()); err != nil {
		return AppendInfo{}, l.ioFailure("append", err)
	}
	l.mu.producers.UpdateMapEndOffset(seg.nextOffset)
	for _, h := range headers {
		if err := l.assignEpochLocked(h); err != nil {
			return AppendInfo{}, err
		}
	}
	info.LogStartOffset = l.mu.logStartOffset
	l.spaceAgain()
	l.mu.unflushedMessages += messages
	l.mu.tailBytes += int64(len(batches))
	if opts.flushMessagesEnabled() && l.mu.unflushedMessages >= opts.FlushMessages {
		if err := l.flushLocked(); err != nil {
			return info, err
		}
	}
	return info, nil
}

// rollJitter draws the per-segment jitter of segment.jitter.ms.
func (l *Log) rollJitter(opts Options) time.Duration {
	if opts.SegmentJitterMs <= 0 {
		return 0
	}
	limitMs := min(opts.SegmentJitterMs, opts.SegmentMs).Milliseconds()
	if limitMs <= 0 {
		return 0
	}
	return time.Duration(l.rng.Int64N(limitMs)) * time.Millisecond
}

// rollLocked starts a new active segment at baseOffset (the log end offset
// or, for a follower, the next batch's offset).
func (l *Log) rollLocked(baseOffset int64) (*segment, error) {
	old := l.activeLocked()
	if baseOffset < old.nextOffset {
		baseOffset = old.nextOffset
	}
	if old.size.Load() == 0 {
		return l.replaceEmptyActiveLocked(baseOffset)
	}
	if err := old.onBecomeInactive(); err != nil {
		return nil, l.ioFailure("roll", err)
	}
	if l.onRoll == nil {
		return l.rollSyncLocked(old, baseOffset)
	}
	// Producer state is snapshotted at each segment boundary, as Kafka does,
	// so recovery replays at most the active segment; the snapshot, the old
	// segments and the directory are synced by the Manager's flusher, and
	// the recovery point moves only once they are (flushRolled).
	l.mu.producers.UpdateMapEndOffset(baseOffset)
	snap, err := l.mu.producers.TakeSnapshotUnsynced()
	if err != nil {
		return nil, l.ioFailure("roll", err)
	}
	seg, err := createSegment(l.fsys, l.Dir(), baseOffset, l.mu.opts, l.clk.Now(), l.rollJitter(l.mu.opts))
	if err != nil {
		return nil, l.ioFailure("roll", err)
	}
	l.addRolledLocked(seg)
	l.onRoll(rollFlush{log: l, next: seg, snapshot: snap})
	return seg, nil
}

// rollSyncLocked finishes a roll of a log without a Manager: the old
// segment is made durable before a newer one exists, so a crash can lose
// only a suffix of the log.
func (l *Log) rollSyncLocked(old *segment, baseOffset int64) (*segment, error) {
	if err := l.flushSegmentsBelowLocked(old); err != nil {
		return nil, err
	}
	l.mu.producers.UpdateMapEndOffset(baseOffset)
	if err := l.mu.producers.TakeSnapshot(); err != nil {
		return nil, l.ioFailure("roll", err)
	}
	seg, err := createSegment(l.fsys, l.Dir(), baseOffset, l.mu.opts, l.clk.Now(), l.rollJitter(l.mu.opts))
	if err != nil {
		return nil, l.ioFailure("roll", err)
	}
	if err := l.fsys.SyncDir(l.Dir()); err != nil {
		seg.close()
		return nil, l.ioFailure("roll", err)
	}
	l.addRolledLocked(seg)
	return seg, nil
}

// addRolledLocked makes seg the active segment.
func (l *Log) addRolledLocked(seg *segment) {
	segs := make([]*segment, len(l.mu.segments), len(l.mu.segments)+1)
	copy(segs, l.mu.segments)
	l.mu.segments = append(segs, seg)
	l.logger.Debug("rolled segment", "partition", l.tp.String(), "base_offset", seg.baseOffset)
}

// replaceEmptyActiveLocked swaps an empty active segment for one at baseOffset.
func (l *Log) replaceEmptyActiveLocked(baseOffset int64) (*segment, error) {
	old := l.activeLocked()
	if old.baseOffset == baseOffset {
		return old, nil
	}
	// A reader may hold the old segment: close it only after the delay.
	if err := old.renameDeleted(); err != nil {
		return nil, l.ioFailure("replace empty segment", err)
	}
	l.mu.pendingDeletes = append(l.mu.pendingDeletes, pendingDelete{seg: old, at: l.clk.Now().Add(l.mu.opts.FileDeleteDelay)})
	seg, err := createSegment(l.fsys, l.Dir(), baseOffset, l.mu.opts, l.clk.Now(), l.rollJitter(l.mu.opts))
	if err != nil {
		return nil, l.ioFailure("replace empty segment", err)
	}
	segs := make([]*segment, len(l.mu.segments))
	copy(segs, l.mu.segments)
	segs[len(segs)-1] = seg
	l.mu.segments = segs
	return seg, nil
}

// Roll forces a new active segment (tests, and Kafka's forced roll).
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return err
	}
	_, err := l.rollLocked(l.activeLocked().nextOffset)
	return err
}
