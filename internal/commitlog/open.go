package commitlog

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/producerstate"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// StartState is what the log directory's checkpoint files and
// clean-shutdown marker say about a log being opened.
type StartState struct {
	// RecoveryPoint is the offset below which the log was flushed
	// (recovery-point-offset-checkpoint); 0 when unknown.
	RecoveryPoint int64
	// LogStartOffset is the first offset served (log-start-offset-checkpoint);
	// 0 when unknown. It is raised to the first segment's base offset.
	LogStartOffset int64
	// CleanShutdown says the node stopped cleanly: segments are not scanned.
	CleanShutdown bool
	// CleanerOffset is the partition's cleaner-offset-checkpoint entry (0
	// when none): offsets below it were compacted, so a hole between two
	// segments there is the cleaner's doing, not a lost segment.
	CleanerOffset int64
	// DefaultOptions says the options given to Open are the broker's
	// defaults, not yet the topic's (the Manager at start-up): the check for
	// a missing segment, which depends on cleanup.policy, waits for the
	// first SetOptions.
	DefaultOptions bool
}

// Open opens (or creates) the log in the partition directory dir. After an
// unclean stop every batch at or above the recovery point is re-validated
// (from inside the segment holding it: see segment.recover); a torn or
// corrupt tail is truncated, and later segments are removed. Missing or corrupt indexes are rebuilt.
func Open(fsys vfs.FS, dir string, tp kafka.TopicPartition, opts Options, clk clock.Clock, st StartState, logger *slog.Logger) (*Log, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l := &Log{fsys: fsys, tp: tp, clk: clk, logger: logger,
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
	l.dir.Store(&dir)
	l.mu.opts = opts.normalized()
	l.mu.highWatermark = -1
	l.mu.lastFlush = clk.Now()
	if _, err := fsys.Stat(dir); err != nil {
		if err := fsys.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create log dir: %w", err) // names the dir
		}
		// The partition directory's entry must survive a crash like its
		// files. One that existed was synced when it was created, or, if
		// a kill came between, by the recovery-point checkpoint's write
		// into the same parent before anything in it was vouched for.
		if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
			return nil, fmt.Errorf("sync parent of %s: %w", dir, err)
		}
	}
	segs, rpIgnored, cut, err := l.loadSegments(&st)
	if err != nil {
		for _, s := range segs {
			s.close()
		}
		return nil, err
	}
	l.mu.segments = segs
	l.mu.logStartOffset = max(st.LogStartOffset, segs[0].baseOffset)
	l.mu.producers = producerstate.New(producerstate.Options{Dir: dir, Name: tp.String(), FS: fsys, Clock: clk, Logger: logger})
	if leo := segs[len(segs)-1].nextOffset; l.mu.logStartOffset > leo {
		if !l.logStartExplained(st, rpIgnored, leo) {
			l.mu.logStartOffset = segs[0].baseOffset
		} else if err := l.truncateFullyLocked(l.mu.logStartOffset); err != nil {
			// Records deleted up to the log start were not flushed before
			// the stop: the log restarts empty there, as Kafka's does.
			l.closeSegments()
			return nil, err
		}
	}
	l.mu.gap = findGap(segs, l.mu.logStartOffset, st.CleanerOffset, dir)
	l.mu.gapUnflushed = l.mu.gap != nil && !st.CleanShutdown && unflushedHole(l.mu.gap.From, l.mu.logStartOffset, st)
	if err := l.openEpochCacheLocked(); err != nil {
		l.closeSegments()
		return nil, err
	}
	if !st.CleanShutdown {
		// Snapshots above the recovery point may describe data recovery
		// dropped, and replaying from below it rebuilds the transaction
		// indexes of the recovered segments.
		rp := min(max(st.RecoveryPoint, l.mu.logStartOffset), l.activeLocked().nextOffset)
		if _, err := l.mu.producers.TruncateAndReload(l.mu.logStartOffset, rp); err != nil {
			l.closeSegments()
			return nil, l.ioFailure("load producer state", err)
		}
	}
	if err := l.loadProducerStateLocked(); err != nil {
		l.closeSegments()
		return nil, err
	}
	// After an unclean stop that recovery found whole, the recovery point
	// stays where the checkpoint put it: what recovery validated above it
	// is not synced, and a later crash re-validates it again (syncing
	// every log here cost a restart of 10,000 partitions several fsyncs
	// each, one log after another; the checkpoint tick's tail flush moves
	// it on). A cut (a torn tail truncated, segments after it removed) is
	// made durable at once: a second crash must not bring the cut bytes
	// back below a recovery point that moved past them.
	l.mu.recoveryPoint = min(max(st.RecoveryPoint, l.mu.logStartOffset), l.activeLocked().nextOffset)
	if st.CleanShutdown {
		l.mu.recoveryPoint = l.activeLocked().nextOffset
	} else if cut || l.mu.logStartOffset > st.RecoveryPoint {
		if err := l.flushLocked(); err != nil {
			l.closeSegments()
			return nil, err
		}
	}
	if !st.DefaultOptions {
		l.checkGapLocked()
	}
	return l, nil
}

// loadSegments removes leftovers of interrupted operations, opens the
// segments and recovers those that need it. A recovery point beyond the
// recovered log end contradicts the log unless the records it vouched for
// lie below the log start (their deletion outlived the stop, the new
// active segment did not): it is then reset to 0 in st (every segment is
// re-validated) and rpIgnored is set. cut reports that recovery truncated
// a segment or removed segments.
func (l *Log) loadSegments(st *StartState) (segs []*segment, rpIgnored, cut bool, err error) {
	segs, created, err := l.openSegments(*st)
	if err != nil || created {
		return segs, false, false, err
	}
	if segs, cut, err = l.recoverSegments(segs, *st); err != nil {
		return segs, false, cut, err
	}
	leo := segs[len(segs)-1].nextOffset
	if st.RecoveryPoint <= leo || st.RecoveryPoint <= st.LogStartOffset && !st.CleanShutdown {
		return segs, false, cut, nil
	}
	l.logger.Warn("recovery-point-offset-checkpoint is beyond the log end offset, which it cannot be: ignored",
		"partition", l.tp.String(), "recovery_point", st.RecoveryPoint, "log_end_offset", leo, "clean_shutdown", st.CleanShutdown)
	st.RecoveryPoint = 0
	if st.CleanShutdown {
		// Nothing was trusted on its word: the segments were flushed at the stop.
		return segs, true, cut, nil
	}
	segs, again, err := l.recoverSegments(segs, *st)
	return segs, true, cut || again, err
}

// openSegments removes leftovers of interrupted operations and opens the
// segments, or creates an empty one when there is none (created).
func (l *Log) openSegments(st StartState) (segs []*segment, created bool, err error) {
	if err := l.finishInterruptedSwaps(); err != nil {
		return nil, false, err
	}
	names, err := l.fsys.List(l.Dir())
	if err != nil {
		return nil, false, fmt.Errorf("list %s: %w", l.Dir(), err)
	}
	var bases []int64
	for _, name := range names {
		switch {
		case strings.HasSuffix(name, deletedSuffix), strings.HasSuffix(name, ".tmp"), strings.HasSuffix(name, cleanedSuffix):
			// Deletions and temporary files interrupted by the stop are finished now.
			if err := l.fsys.Remove(filepath.Join(l.Dir(), name)); err != nil && !vfs.IsNotExist(err) {
				return nil, false, fmt.Errorf("remove leftover %s: %w", name, err)
			}
		case strings.HasSuffix(name, logSuffix):
			base, err := strconv.ParseInt(strings.TrimSuffix(name, logSuffix), 10, 64)
			if err != nil || base < 0 {
				l.logger.Warn("ignoring file that is not a segment", "partition", l.tp.String(), "file", name)
				continue
			}
			bases = append(bases, base)
		}
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	opts := l.mu.opts
	now := l.clk.Now()
	for _, base := range bases {
		s, err := openSegment(l.fsys, l.Dir(), base, opts, now)
		if err != nil {
			return segs, false, err
		}
		segs = append(segs, s)
	}
	if len(segs) == 0 {
		s, err := createSegment(l.fsys, l.Dir(), st.LogStartOffset, opts, now, l.rollJitter(opts))
		if err != nil {
			return nil, false, err
		}
		return []*segment{s}, true, nil
	}
	return segs, false, nil
}

// recoverSegments sets each segment's state: a segment wholly below the
// recovery point, or any segment after a clean stop, is trusted; others are
// re-validated from the recovery point (segment.recover: the batches
// below it are trusted, their headers only read). A segment whose tail had to be cut ends the log: later
// segments cannot follow a hole, so they are deleted (as Kafka does).
// cutAny reports a cut or a deletion: Open syncs the log after one.
func (l *Log) recoverSegments(segs []*segment, st StartState) (_ []*segment, cutAny bool, err error) {
	opts := l.mu.opts
	for i, s := range segs {
		last := i+1 == len(segs)
		trusted := st.CleanShutdown || (!last && segs[i+1].baseOffset <= st.RecoveryPoint && !s.untrimmed())
		var cut int64
		if trusted {
			nextBase := int64(-1)
			if !last {
				nextBase = segs[i+1].baseOffset
			}
			err = s.loadState(opts, last, nextBase)
		} else {
			cut, err = s.recover(opts, st.RecoveryPoint)
		}
		if err != nil {
			return segs, cutAny, err
		}
		if cut > 0 {
			cutAny = true
			l.logger.Warn("truncated invalid tail of segment", "partition", l.tp.String(), "segment", s.baseOffset, "bytes", cut)
		}
		// Later segments also go when only empty ones follow a hole: a
		// roll's background flush had not synced this one when the crash
		// came, but a directory sync had made newer names durable.
		if !last && (cut > 0 || s.nextOffset > segs[i+1].baseOffset || !trusted && emptyAfterHole(segs, i, st)) {
			cutAny = true
			for _, later := range segs[i+1:] {
				if err := removeSegmentFiles(later); err != nil {
					return segs[:i+1], true, err
				}
			}
			l.logger.Warn("deleted segments after a corrupt one", "partition", l.tp.String(), "count", len(segs)-i-1)
			return segs[:i+1], true, nil
		}
		if !last {
			if err := s.onBecomeInactive(); err != nil {
				return segs, cutAny, err
			}
		}
	}
	return segs, cutAny, nil
}

// removeSegmentFiles closes a segment and removes its files at once
// (recovery: nothing else holds it yet).
func removeSegmentFiles(s *segment) error {
	errs := []error{s.close()}
	for _, suffix := range segmentSuffixes() {
		if err := s.fsys.Remove(s.path(suffix)); err != nil && !vfs.IsNotExist(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// emptyAfterHole reports a hole after segs[i] above the recovery point of
// an unclean stop, followed only by empty segments. A hole followed by
// data is kept (see Open).
func emptyAfterHole(segs []*segment, i int, st StartState) bool {
	from := segs[i].nextOffset
	if st.CleanShutdown || from >= segs[i+1].baseOffset || !unflushedHole(from, st.LogStartOffset, st) {
		return false
	}
	for _, later := range segs[i+1:] {
		if later.size.Load() > 0 {
			return false
		}
	}
	return true
}

// unflushedHole reports whether a hole starting at from, after an unclean
// stop, misses only records the recovery point did not vouch for: those
// at or above it. Records below the log start do not count (retention
// raises the recovery point to the log start, whose records are deleted).
func unflushedHole(from, logStart int64, st StartState) bool {
	return max(from, logStart) >= st.RecoveryPoint
}
