package commitlog

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// The log cleaner writes the compacted copy of a group of segments as a new
// segment whose files carry the ".cleaned" suffix, then swaps it in as
// Kafka does:
//
//  1. the .cleaned files are synced, then renamed ".swap" (indexes first,
//     the .log last) and the directory synced: from here the swap is
//     committed, because recovery completes any .log.swap it finds;
//  2. the replaced segments are renamed ".deleted" (removed after
//     file.delete.delay.ms, so reads holding them finish) and the
//     directory synced;
//  3. the .swap files are renamed to their live names (the .log last) and
//     the directory synced.
//
// A crash before 1 leaves .cleaned files, which Open removes; after it,
// Open finishes the swap (swap_recover.go).
const (
	cleanedSuffix = ".cleaned"
	swapSuffix    = ".swap"
)

// ErrCleaningAborted says the segments a clean was replacing changed
// (retention, truncation, deletion) while it ran: nothing was replaced.
var ErrCleaningAborted = errors.New("commitlog: segments changed while cleaning")

// CleanedSegment is a segment being written by the log cleaner to replace
// a run of inactive segments. Only the cleaner's goroutine uses it.
type CleanedSegment struct {
	log      *Log
	seg      *segment
	opts     Options
	replaces []*segment
	sizes    []int64 // sizes of replaces when the clean began
	end      int64   // base offset of the segment after the replaced run
	aborted  []AbortedTxn
	headers  []records.Header
}

// BeginCleanedSegment starts the .cleaned segment that will replace the
// inactive segments whose base offsets lie in [firstBase, endBase); the
// first must start at firstBase. The active segment is never replaced.
func (l *Log) BeginCleanedSegment(firstBase, endBase int64) (*CleanedSegment, error) {
	l.mu.RLock()
	if err := l.checkUsableLocked(); err != nil {
		l.mu.RUnlock()
		return nil, err
	}
	opts := l.mu.opts
	segs := l.mu.segments
	c := &CleanedSegment{log: l, opts: opts}
	for i, s := range segs[:len(segs)-1] {
		if s.baseOffset >= firstBase && s.baseOffset < endBase {
			c.replaces = append(c.replaces, s)
			c.sizes = append(c.sizes, s.size.Load())
			c.end = segs[i+1].baseOffset
		}
	}
	now := l.clk.Now()
	l.mu.RUnlock()
	if len(c.replaces) == 0 || c.replaces[0].baseOffset != firstBase {
		return nil, fmt.Errorf("%w: no inactive segment of %s starts at %d", ErrCleaningAborted, l.tp, firstBase)
	}
	// Aborted transactions stay in the new segment's transaction index
	// unless the cleaner drops them (DropAbortedTxn).
	for _, s := range c.replaces {
		s.txnIndex.mu.Lock()
		c.aborted = append(c.aborted, s.txnIndex.entries...)
		s.txnIndex.mu.Unlock()
	}
	seg := &segment{fsys: l.fsys, dir: l.Dir(), baseOffset: firstBase, created: now, fileSuffix: cleanedSuffix,
		nextOffset: firstBase, maxTimestamp: -1, offsetOfMaxTimestamp: firstBase, firstBatchTimestamp: -1}
	if err := seg.createFiles(opts); err != nil {
		return nil, l.ioFailure("create cleaned segment", err)
	}
	c.seg = seg
	return c, nil
}

// DropAbortedTxn leaves the aborted transaction whose ABORT marker is at
// markerOffset out of the cleaned segment's transaction index: the cleaner
// found none of its batches left, so read_committed fetches need no entry
// (Kafka's cleaned index keeps only transactions with data before their
// marker). The marker itself may stay until its delete horizon.
func (c *CleanedSegment) DropAbortedTxn(producerID, markerOffset int64) {
	c.aborted = slices.DeleteFunc(c.aborted, func(t AbortedTxn) bool {
		return t.ProducerID == producerID && t.LastOffset == markerOffset
	})
}

// EndOffset is the base offset of the segment after the replaced run: the
// cleaned segment may hold offsets below it only.
func (c *CleanedSegment) EndOffset() int64 { return c.end }

// Size is the number of bytes written so far.
func (c *CleanedSegment) Size() int64 { return c.seg.size.Load() }

// Append writes whole batches (offsets kept as they are) to the cleaned
// segment. Offsets must increase and stay inside the replaced range.
func (c *CleanedSegment) Append(batches []byte) error {
	c.headers = c.headers[:0]
	next := c.seg.nextOffset
	_, err := records.Batches(batches, func(h records.Header, _ []byte) error {
		if h.BaseOffset < next || h.NextOffset() > c.end || h.LastOffset()-c.seg.baseOffset > int64(1<<31-1) {
			return fmt.Errorf("cleaned batch at offsets [%d, %d] outside [%d, %d)", h.BaseOffset, h.LastOffset(), next, c.end)
		}
		next = h.NextOffset()
		c.headers = append(c.headers, h)
		return nil
	})
	if err != nil {
		return fmt.Errorf("append to cleaned segment of %s: %w", c.log.tp, err)
	}
	if len(c.headers) == 0 {
		return nil
	}
	// One batch adds at most one entry to each index: a batch that would
	// find them full fails the clean instead of the log.
	if c.seg.index.entries()+len(c.headers) > c.seg.index.maxEntries ||
		c.seg.timeIndex.entries()+len(c.headers) > c.seg.timeIndex.maxEntries-1 {
		return fmt.Errorf("%w: indexes of the cleaned segment of %s are full", ErrCleaningAborted, c.log.tp)
	}
	if err := c.seg.append(batches, c.headers, c.opts); err != nil {
		return c.log.ioFailure("append to cleaned segment", err)
	}
	return nil
}

// Abort removes the cleaned segment's files: the clean is given up.
func (c *CleanedSegment) Abort() error {
	errs := []error{c.seg.close()}
	for _, suffix := range segmentSuffixes() {
		if err := c.log.fsys.Remove(c.seg.path(suffix)); err != nil && !vfs.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove cleaned segment file: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ReplaceSegments swaps the cleaned segment in for the segments it
// replaces, crash-safely (see the steps above). When those segments changed
// since BeginCleanedSegment it aborts with ErrCleaningAborted. An I/O
// error after the swap is committed takes the log offline: its files are
// then finished by the next Open.
func (l *Log) ReplaceSegments(c *CleanedSegment) error {
	for _, t := range c.aborted {
		if t.LastOffset < c.seg.nextOffset {
			if err := c.seg.txnIndex.append(t); err != nil {
				return errors.Join(l.ioFailure("clean transaction index", err), c.Abort())
			}
		}
	}
	if err := c.seg.onBecomeInactive(); err != nil {
		return errors.Join(l.ioFailure("finish cleaned segment", err), c.Abort())
	}
	if err := c.seg.flush(); err != nil {
		return errors.Join(l.ioFailure("sync cleaned segment", err), c.Abort())
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkUsableLocked(); err != nil {
		return errors.Join(err, c.Abort())
	}
	first, ok := l.replacedRunLocked(c)
	if !ok {
		return errors.Join(fmt.Errorf("%w: %s", ErrCleaningAborted, l.tp), c.Abort())
	}
	if err := c.seg.renameFiles(cleanedSuffix, swapSuffix); err != nil {
		return errors.Join(l.ioFailure("swap cleaned segment", err), c.Abort())
	}
	if err := l.fsys.SyncDir(l.Dir()); err != nil {
		return l.ioFailure("swap cleaned segment", err)
	}
	now := l.clk.Now()
	for _, s := range c.replaces {
		if err := s.renameDeleted(); err != nil {
			return l.ioFailure("swap cleaned segment", err)
		}
		l.mu.pendingDeletes = append(l.mu.pendingDeletes, pendingDelete{seg: s, at: now.Add(l.mu.opts.FileDeleteDelay)})
	}
	// The replaced names must be gone before the new segment takes its live
	// name: a disk keeping only the later rename would show overlapping
	// segments, and recovery would cut the log there.
	if err := l.fsys.SyncDir(l.Dir()); err != nil {
		return l.ioFailure("swap cleaned segment", err)
	}
	if err := c.seg.renameFiles(swapSuffix, ""); err != nil {
		return l.ioFailure("swap cleaned segment", err)
	}
	if err := l.fsys.SyncDir(l.Dir()); err != nil {
		return l.ioFailure("swap cleaned segment", err)
	}
	// Reopened under its live name, the segment's files and state are
	// those of any inactive segment.
	if err := c.seg.close(); err != nil {
		return l.ioFailure("swap cleaned segment", err)
	}
	live, err := openSegment(l.fsys, l.Dir(), c.seg.baseOffset, l.mu.opts, now)
	if err != nil {
		return l.ioFailure("open cleaned segment", err)
	}
	if err := live.loadState(l.mu.opts, false, c.end); err != nil {
		live.close()
		return l.ioFailure("open cleaned segment", err)
	}
	segs := make([]*segment, 0, len(l.mu.segments)-len(c.replaces)+1)
	segs = append(segs, l.mu.segments[:first]...)
	segs = append(segs, live)
	segs = append(segs, l.mu.segments[first+len(c.replaces):]...)
	l.mu.segments = segs
	l.logger.Info("replaced segments with their cleaned copy", "partition", l.tp.String(),
		"base_offset", live.baseOffset, "replaced", len(c.replaces), "size", live.size.Load())
	return nil
}

// replacedRunLocked finds the segments c replaces in the current list,
// unchanged and still followed by another segment, and returns the index
// of the first.
func (l *Log) replacedRunLocked(c *CleanedSegment) (int, bool) {
	segs := l.mu.segments
	first := -1
	for i, s := range segs {
		if s == c.replaces[0] {
			first = i
			break
		}
	}
	if first < 0 || first+len(c.replaces) >= len(segs) {
		return 0, false
	}
	for k, s := range c.replaces {
		if segs[first+k] != s || s.size.Load() != c.sizes[k] {
			return 0, false
		}
	}
	return first, true
}

// renameFiles renames the segment's files from suffix from to suffix to
// (indexes first, the .log last: a .log.swap means every file of the
// segment is in place) and records the new suffix.
func (s *segment) renameFiles(from, to string) error {
	for _, suffix := range [...]string{indexSuffix, timeIndexSuffix, txnIndexSuffix, logSuffix} {
		old := segmentPath(s.dir, s.baseOffset, suffix) + from
		if err := s.fsys.Rename(old, segmentPath(s.dir, s.baseOffset, suffix)+to); err != nil {
			if suffix == txnIndexSuffix && vfs.IsNotExist(err) {
				continue // created only for the first abort
			}
			return fmt.Errorf("rename %s: %w", old, err)
		}
	}
	s.fileSuffix = to
	s.index.setPath(s.path(indexSuffix))
	s.timeIndex.setPath(s.path(timeIndexSuffix))
	return nil
}

// segmentPath is the live path of a segment file.
func segmentPath(dir string, baseOffset int64, suffix string) string {
	return filepath.Join(dir, segmentFileName(baseOffset, suffix))
}
