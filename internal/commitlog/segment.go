package commitlog

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// File name suffixes of a segment, as Kafka names them.
const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	deletedSuffix   = ".deleted"
)

// segmentFileName is Kafka's name for a segment file: the base offset in 20 digits.
func segmentFileName(baseOffset int64, suffix string) string {
	return fmt.Sprintf("%020d%s", baseOffset, suffix)
}

// segment is one .log file with its two indexes. The appender (holding the
// log's write lock) changes it; readers use positional reads bounded by
// size, which only grows between truncations.
type segment struct {
	fsys       vfs.FS
	dir        string
	baseOffset int64
	log        vfs.File
	index      *offsetIndex
	timeIndex  *timeIndex
	txnIndex   *txnIndex
	created    time.Time
	rollJitter time.Duration

	// fileSuffix follows every file name of a segment the log cleaner is
	// still writing (".cleaned"); empty for a live segment.
	fileSuffix string

	size atomic.Int64 // valid bytes of the .log file

	// Fields below are changed only under the log's write lock.
	nextOffset               int64 // offset after the segment's last batch
	bytesSinceLastIndexEntry int
	maxTimestamp             int64 // largest batch max timestamp so far
	offsetOfMaxTimestamp     int64 // last offset of the batch holding it
	firstBatchTimestamp      int64 // drives segment.ms (Kafka's rollingBasedTimestamp)
}

func (s *segment) path(suffix string) string {
	return filepath.Join(s.dir, segmentFileName(s.baseOffset, suffix)+s.fileSuffix)
}

// createSegment makes a new, empty, active segment.
func createSegment(fsys vfs.FS, dir string, baseOffset int64, opts Options, now time.Time, jitter time.Duration) (*segment, error) {
	s := &segment{fsys: fsys, dir: dir, baseOffset: baseOffset, created: now, rollJitter: jitter,
		nextOffset: baseOffset, maxTimestamp: -1, offsetOfMaxTimestamp: baseOffset, firstBatchTimestamp: -1}
	if err := s.createFiles(opts); err != nil {
		return nil, err
	}
	return s, nil
}

// createFiles creates the .log file of a new segment (under its
// fileSuffix) with empty, resident indexes whose files are created when
// first written (a flush, roll or close), as Kafka's LazyIndex.
func (s *segment) createFiles(opts Options) error {
	f, err := s.fsys.Create(s.path(logSuffix))
	if err != nil {
		return fmt.Errorf("create segment %s: %w", s.path(logSuffix), err)
	}
	s.log = f
	// Stale index files of an earlier segment at this offset must not survive.
	for _, suffix := range []string{indexSuffix, timeIndexSuffix, txnIndexSuffix} {
		if err := s.fsys.Remove(s.path(suffix)); err != nil && !vfs.IsNotExist(err) {
			f.Close()
			return fmt.Errorf("remove stale %s: %w", s.path(suffix), err)
		}
	}
	if err := s.openIndexes(opts); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(s.index.ensureResident(), s.timeIndex.ensureResident()); err != nil {
		s.close()
		return err
	}
	return nil
}

// openSegment opens an existing segment. Its indexes are loaded as found;
// loadState or recover then establishes nextOffset.
func openSegment(fsys vfs.FS, dir string, baseOffset int64, opts Options, now time.Time) (*segment, error) {
	s := &segment{fsys: fsys, dir: dir, baseOffset: baseOffset, created: now,
		nextOffset: baseOffset, maxTimestamp: -1, offsetOfMaxTimestamp: baseOffset, firstBatchTimestamp: -1}
	f, err := fsys.OpenReadWrite(s.path(logSuffix))
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", s.path(logSuffix), err)
	}
	s.log = f
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("size of segment %s: %w", s.path(logSuffix), err)
	}
	s.size.Store(size)
	if err := s.openIndexes(opts); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *segment) openIndexes(opts Options) error {
	idx, err := openOffsetIndex(s.fsys, s.path(indexSuffix), s.baseOffset, opts.SegmentIndexBytes)
	if err != nil {
		return err
	}
	tidx, err := openTimeIndex(s.fsys, s.path(timeIndexSuffix), s.baseOffset, opts.SegmentIndexBytes)
	if err != nil {
		idx.close()
		return err
	}
	txn, err := openTxnIndex(s.fsys, s.path(txnIndexSuffix))
	if err != nil {
		idx.close()
		tidx.close()
		return err
	}
	s.index, s.timeIndex, s.txnIndex = idx, tidx, txn
	return nil
}

// readHeader reads the batch header at pos. It returns io.EOF when fewer than
// a header's bytes remain before limit (a torn tail or the end), and a
// records.ErrBadLength error when the batch would pass limit, so no caller
// sizes a buffer from a corrupt length.
func readHeader(f vfs.File, pos, limit int64) (records.Header, error) {
	if limit-pos < records.HeaderSize {
		return records.Header{}, io.EOF
	}
	var buf [records.HeaderSize]byte
	if _, err := f.ReadAt(buf[:], pos); err != nil {
		if errors.Is(err, io.EOF) {
			return records.Header{}, io.EOF
		}
		return records.Header{}, err
	}
	h, err := records.ParseHeader(buf[:])
	if err != nil {
		return h, err
	}
	if pos+h.Size() > limit {
		return h, fmt.Errorf("%w: batch of %d bytes at %d passes the end %d", records.ErrBadLength, h.Size(), pos, limit)
	}
	return h, nil
}

// loadState sets the in-memory state of a segment that needs no recovery:
// nextOffset by scanning from the last offset index entry (at most
// index.interval.bytes of headers) and the max timestamp from the time index,
// as Kafka does after a clean shutdown. An index that points past the log
// is corrupt and is rebuilt by a full recovery. The active segment's tail
// must be whole batches (else it is recovered, cutting what is not); in a
// sealed segment, which is trusted, damaged bytes are left for the reads
// that reach them to report, and it ends where the next one starts
// (nextBase), as Kafka never scans a sealed segment at load.
func (s *segment) loadState(opts Options, active bool, nextBase int64) error {
	size := s.size.Load()
	if active {
		if err := errors.Join(s.index.ensureResident(), s.timeIndex.ensureResident()); err != nil {
			return err
		}
	}
	if !s.indexesSane(size, active) {
		_, err := s.recover(opts, 0)
		return err
	}
	pos, tail, err := s.scanTail(size)
	if err != nil && !isFormatError(err) {
		return fmt.Errorf("load segment %s: %w", s.path(logSuffix), err)
	}
	if err != nil || pos != size {
		if active {
			// The tail is not whole batches: only recovery can say what is valid.
			_, err := s.recover(opts, 0)
			return err
		}
		s.nextOffset = nextBase
	}
	if s.firstBatchTimestamp < 0 && size > 0 {
		if h, err := readHeader(s.log, 0, size); err == nil {
			s.firstBatchTimestamp = h.MaxTimestamp
		}
	}
	te := s.timeIndex.lastEntry()
	s.maxTimestamp, s.offsetOfMaxTimestamp = te.Timestamp, te.Offset
	// The time index may lack the entry a roll adds for the segment's
	// maximum (the roll's flush had not synced it before a crash); the
	// headers after the last index entry, read anyway, say it.
	if tail.Timestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = tail.Timestamp, tail.Offset
	}
	return nil
}

// scanTail sets nextOffset from the batch headers after the last offset
// index entry and returns where they stop: size, or where the bytes are not
// a whole batch (err then says why when it is not a short tail), and the
// largest timestamp of those batches with its offset (-1 when none).
func (s *segment) scanTail(size int64) (int64, indexEntry, error) {
	s.nextOffset = s.baseOffset
	pos := s.index.lastEntry().Position
	maxTs := indexEntry{Timestamp: -1, Offset: -1}
	for {
		h, err := readHeader(s.log, pos, size)
		if err == io.EOF {
			return pos, maxTs, nil
		}
		if err != nil {
			return pos, maxTs, err
		}
		if s.firstBatchTimestamp < 0 && pos == 0 {
			s.firstBatchTimestamp = h.MaxTimestamp
		}
		if h.MaxTimestamp > maxTs.Timestamp {
			maxTs = indexEntry{Timestamp: h.MaxTimestamp, Offset: h.LastOffset()}
		}
		s.nextOffset = h.NextOffset()
		pos += h.Size()
	}
}

// indexesSane is Kafka's index sanity check: both files present for a
// non-empty segment, trimmed to whole entries when inactive, and their last
// entries inside the segment.
func (s *segment) indexesSane(size int64, active bool) bool {
	if size > 0 && (!s.index.existed || !s.timeIndex.existed) {
		return false
	}
	if !active && (s.index.fileSize%offsetIndexEntrySize != 0 || s.timeIndex.fileSize%timeIndexEntrySize != 0) {
		return false
	}
	if s.index.entries() > 0 {
		last := s.index.lastEntry()
		if last.Offset < s.baseOffset || last.Position >= size {
			return false
		}
	}
	if s.timeIndex.entries() > 0 && s.timeIndex.lastEntry().Offset < s.baseOffset {
		return false
	}
	return true
}

// untrimmed reports a sealed segment whose roll-time trim did not reach
// the disk (its roll's flush had not run before a crash): an index still
// ends with the preallocated file's zero slots. No real entry but the
// first can be all zero (offsets and timestamps increase).
func (s *segment) untrimmed() bool {
	return lastSlotZero(s.index.indexFile) || lastSlotZero(s.timeIndex.indexFile)
}

func lastSlotZero(x *indexFile) bool {
	n := x.entries()
	return n > 1 && isZero(x.entry(n-1))
}

// recover re-reads the segment, validating every batch (header, CRC,
// offsets), rebuilds both indexes, and truncates the file at the first
// invalid byte. It returns how many bytes were cut. An I/O error is
// returned as is (the caller takes the directory offline).
//
// Batches wholly below trustBelow (the recovery point, whose bytes were
// fsynced before it moved there) are trusted: only their headers are read,
// to rebuild the indexes and find where validation starts, and their CRCs
// are not checked. This departs from Kafka, which re-validates every
// segment holding offsets at or above the recovery point from its first
// byte: since the recovery point also moves inside the active segment
// (FlushTail), re-validating from the segment's start would re-read up to
// segment.bytes per partition for nothing. The headers' own checks (magic,
// length, increasing offsets) still apply, and a batch failing them cuts
// the segment there, as it would have without the trust.
func (s *segment) recover(opts Options, trustBelow int64) (truncated int64, err error) {
	if err := s.index.truncateEntries(0); err != nil {
		return 0, err
	}
	if err := s.timeIndex.truncateEntries(0); err != nil {
		return 0, err
	}
	size, err := s.log.Size()
	if err != nil {
		return 0, fmt.Errorf("size of segment %s: %w", s.path(logSuffix), err)
	}
	s.nextOffset = s.baseOffset
	s.bytesSinceLastIndexEntry = 0
	s.maxTimestamp, s.offsetOfMaxTimestamp, s.firstBatchTimestamp = -1, s.baseOffset, -1
	var pos int64
	var buf []byte
	for {
		h, err := readHeader(s.log, pos, size)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !isFormatError(err) {
				return 0, fmt.Errorf("recover segment %s at %d: %w", s.path(logSuffix), pos, err)
			}
			break
		}
		n := h.Size()
		if pos+n > size || h.BaseOffset < s.nextOffset || h.LastOffsetDelta < 0 ||
			h.LastOffset()-s.baseOffset > math.MaxInt32 || pos+n > math.MaxInt32 {
			break
		}
		if h.NextOffset() > trustBelow {
			if int64(cap(buf)) < n {
				buf = make([]byte, n)
			}
			buf = buf[:n]
			if _, err := s.log.ReadAt(buf, pos); err != nil {
				return 0, fmt.Errorf("recover segment %s at %d: %w", s.path(logSuffix), pos, err)
			}
			if records.CheckCRC(buf) != nil {
				break
			}
		}
		if err := s.indexBatch(h, pos, opts); err != nil {
			return 0, err
		}
		s.nextOffset = h.NextOffset()
		pos += n
	}
	if pos < size {
		if err := s.log.Truncate(pos); err != nil {
			return 0, fmt.Errorf("truncate corrupt tail of %s: %w", s.path(logSuffix), err)
		}
	}
	s.size.Store(pos)
	// Aborts whose marker was cut go; lost ones come back when the producer
	// state is replayed over this segment.
	if err := s.txnIndex.truncateTo(s.nextOffset); err != nil {
		return 0, err
	}
	return size - pos, nil
}

// isFormatError tells bytes that are not a valid batch (recoverable by
// truncation) from I/O failures.
func isFormatError(err error) bool {
	return errors.Is(err, records.ErrBadMagic) || errors.Is(err, records.ErrBadLength) ||
		errors.Is(err, records.ErrShortBatch) || errors.Is(err, records.ErrCRC) ||
		errors.Is(err, records.ErrCorruptBatch)
}

// indexBatch updates the index state for a batch that starts at pos, as
// Kafka's LogSegment.append: an offset index entry (and a time index entry)
// once more than index.interval.bytes were written since the last one.
func (s *segment) indexBatch(h records.Header, pos int64, opts Options) error {
	if s.firstBatchTimestamp < 0 && pos == 0 {
		s.firstBatchTimestamp = h.MaxTimestamp
	}
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
	}
	if s.bytesSinceLastIndexEntry > opts.IndexIntervalBytes {
		if err := s.index.append(h.LastOffset(), pos); err != nil {
			return err
		}
		if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, false); err != nil {
			return err
		}
		s.bytesSinceLastIndexEntry = 0
	}
	s.bytesSinceLastIndexEntry += int(h.Size())
	return nil
}

// append writes whole batches (offsets already assigned) at the end of the
// segment and indexes them. On any error the segment is put back as it was
// (file cut back, index entries of the batches dropped), so a failed append
// (a full disk) leaves nothing behind.
func (s *segment) append(batches []byte, headers []records.Header, opts Options) error {
	pos := s.size.Load()
	saved := *s.appendState()
	if _, err := s.log.WriteAt(batches, pos); err != nil {
		return s.undoAppend(saved, pos, headers[0].BaseOffset, fmt.Errorf("append to %s: %w", s.path(logSuffix), err))
	}
	p := pos
	for _, h := range headers {
		if err := s.indexBatch(h, p, opts); err != nil {
			return s.undoAppend(saved, pos, headers[0].BaseOffset, err)
		}
		p += h.Size()
		s.nextOffset = h.NextOffset()
	}
	s.size.Store(p)
	return nil
}

// segmentAppendState is the part of a segment an append changes in memory.
type segmentAppendState struct {
	nextOffset, maxTimestamp, offsetOfMaxTimestamp, firstBatchTimestamp int64
	bytesSinceLastIndexEntry                                            int
}

func (s *segment) appendState() *segmentAppendState {
	return &segmentAppendState{s.nextOffset, s.maxTimestamp, s.offsetOfMaxTimestamp, s.firstBatchTimestamp, s.bytesSinceLastIndexEntry}
}

func (s *segment) undoAppend(st segmentAppendState, pos, firstOffset int64, cause error) error {
	s.nextOffset, s.maxTimestamp, s.offsetOfMaxTimestamp = st.nextOffset, st.maxTimestamp, st.offsetOfMaxTimestamp
	s.firstBatchTimestamp, s.bytesSinceLastIndexEntry = st.firstBatchTimestamp, st.bytesSinceLastIndexEntry
	return errors.Join(cause,
		s.index.truncateTo(firstOffset),
		s.timeIndex.truncateTo(firstOffset),
		s.log.Truncate(pos))
}

// shouldRoll reports whether appending size bytes whose largest timestamp is
// maxTimestamp and last offset lastOffset needs a new segment first
// (Kafka's LogSegment.shouldRoll).
func (s *segment) shouldRoll(opts Options, size int64, maxTimestamp, lastOffset int64, now time.Time) bool {
	cur := s.size.Load()
	if cur == 0 {
		return lastOffset-s.baseOffset > math.MaxInt32
	}
	if cur > opts.SegmentBytes-size {
		return true
	}
	if s.timeWaitedForRoll(now, maxTimestamp) > opts.maxSegmentMs()-s.rollJitter {
		return true
	}
	return s.index.isFull() || s.timeIndex.entries() >= s.timeIndex.maxEntries-1 ||
		lastOffset-s.baseOffset > math.MaxInt32
}

// timeWaitedForRoll measures segment age from its first batch's timestamp
// when it has one, else from when the segment was created.
func (s *segment) timeWaitedForRoll(now time.Time, maxTimestamp int64) time.Duration {
	if s.firstBatchTimestamp >= 0 {
		return time.Duration(maxTimestamp-s.firstBatchTimestamp) * time.Millisecond
	}
	return now.Sub(s.created)
}

// onBecomeInactive is called when a newer segment takes over appends: the
// time index gets its final entry and both indexes are trimmed.
func (s *segment) onBecomeInactive() error {
	if s.maxTimestamp >= 0 {
		if err := s.timeIndex.maybeAppend(s.maxTimestamp, s.offsetOfMaxTimestamp, true); err != nil {
			return err
		}
	}
	if err := s.index.trim(); err != nil {
		return err
	}
	if err := s.timeIndex.trim(); err != nil {
		return err
	}
	s.index.release()
	s.timeIndex.release()
	return nil
}

// translateOffset finds the first batch whose last offset is >= offset,
// scanning from the offset index's nearest entry. found is false when the
// segment holds no such batch. Damaged bytes on the way are a
// *CorruptBatchError.
func (s *segment) translateOffset(offset int64) (pos int64, h records.Header, found bool, err error) {
	size := s.size.Load()
	entry := s.index.lookup(offset)
	pos = entry.Position
	next := int64(-1) // the base offset of the batch at pos, once known
	for {
		h, err = readHeader(s.log, pos, size)
		if err == io.EOF {
			return 0, h, false, nil
		}
		if err != nil {
			if next < 0 {
				next = s.baseOffsetAt(pos, entry.Offset)
			}
			return 0, h, false, s.readError(pos, next, err)
		}
		if h.LastOffset() >= offset {
			return pos, h, true, nil
		}
		pos += h.Size()
		next = h.NextOffset()
	}
}

// baseOffsetAt is the base offset the batch at pos should have, the
// offset after the batches before it, for a report of damage at an offset
// index entry (whose offset, last, is one of that batch's): the headers
// are scanned from the entry before. last is returned when they cannot be.
func (s *segment) baseOffsetAt(pos, last int64) int64 {
	if pos == 0 {
		return s.baseOffset
	}
	p, next := s.index.lookup(last-1).Position, s.baseOffset
	for p < pos {
		h, err := readHeader(s.log, p, pos)
		if err != nil {
			return last
		}
		p, next = p+h.Size(), h.NextOffset()
	}
	if p != pos {
		return last
	}
	return next
}

// readError describes a failed header read at pos, where the batch holding
// offset was expected: damage (a *CorruptBatchError) or an I/O error.
func (s *segment) readError(pos, offset int64, err error) error {
	if isFormatError(err) {
		return &CorruptBatchError{File: s.path(logSuffix), Position: pos, Offset: offset, Err: err}
	}
	return fmt.Errorf("read %s at %d: %w", s.path(logSuffix), pos, err)
}

// truncateTo removes the batch holding offset and everything after it,
// returning the bytes removed.
func (s *segment) truncateTo(offset int64) (int64, error) {
	pos, _, found, err := s.translateOffset(offset)
	if err != nil || !found {
		return 0, err
	}
	if err := s.index.truncateTo(offset); err != nil {
		return 0, err
	}
	if err := s.timeIndex.truncateTo(offset); err != nil {
		return 0, err
	}
	if err := s.txnIndex.truncateTo(offset); err != nil {
		return 0, err
	}
	size := s.size.Load()
	if err := s.log.Truncate(pos); err != nil {
		return 0, fmt.Errorf("truncate %s: %w", s.path(logSuffix), err)
	}
	s.size.Store(pos)
	// Recompute what the removed batches contributed.
	s.nextOffset = s.baseOffset
	s.maxTimestamp, s.offsetOfMaxTimestamp = -1, s.baseOffset
	if pos == 0 {
		s.firstBatchTimestamp = -1
	}
	p := s.index.lastEntry().Position
	s.bytesSinceLastIndexEntry = 0
	for p < pos {
		h, err := readHeader(s.log, p, pos)
		if err != nil {
			return 0, fmt.Errorf("rescan %s after truncation: %w", s.path(logSuffix), err)
		}
		s.nextOffset = h.NextOffset()
		s.bytesSinceLastIndexEntry += int(h.Size())
		p += h.Size()
	}
	te := s.timeIndex.lastEntry()
	s.maxTimestamp, s.offsetOfMaxTimestamp = te.Timestamp, te.Offset
	if err := s.scanMaxTimestampFrom(s.index.lastEntry().Position, pos); err != nil {
		return 0, err
	}
	return size - pos, nil
}

// scanMaxTimestampFrom folds the max timestamps of batches in [from, to)
// into the segment's max, for the part the time index does not cover.
func (s *segment) scanMaxTimestampFrom(from, to int64) error {
	for p := from; p < to; {
		h, err := readHeader(s.log, p, to)
		if err != nil {
			return fmt.Errorf("scan %s: %w", s.path(logSuffix), err)
		}
		if h.MaxTimestamp > s.maxTimestamp {
			s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, h.LastOffset()
		}
		p += h.Size()
	}
	return nil
}

// flush makes the segment's log and indexes durable.
func (s *segment) flush() error {
	if err := s.log.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", s.path(logSuffix), err)
	}
	if err := s.index.sync(); err != nil {
		return err
	}
	if err := s.timeIndex.sync(); err != nil {
		return err
	}
	return s.txnIndex.sync()
}

func (s *segment) close() error {
	return errors.Join(s.log.Close(), s.index.close(), s.timeIndex.close(), s.txnIndex.close())
}

// segmentSuffixes are the files a segment consists of.
func segmentSuffixes() [4]string {
	return [...]string{logSuffix, indexSuffix, timeIndexSuffix, txnIndexSuffix}
}

// renameDeleted marks the segment's files for deletion (Kafka's
// "<name>.deleted"); open handles stay usable until close.
func (s *segment) renameDeleted() error {
	for _, suffix := range segmentSuffixes() {
		if err := s.fsys.Rename(s.path(suffix), s.path(suffix)+deletedSuffix); err != nil && !vfs.IsNotExist(err) {
			return fmt.Errorf("rename %s for deletion: %w", s.path(suffix), err)
		}
	}
	// The indexes open their file per operation: a read still in flight
	// finds it under the new name.
	s.index.setPath(s.path(indexSuffix) + deletedSuffix)
	s.timeIndex.setPath(s.path(timeIndexSuffix) + deletedSuffix)
	return nil
}

// removeDeleted closes the segment and removes its renamed files.
func (s *segment) removeDeleted() error {
	errs := []error{s.close()}
	for _, suffix := range segmentSuffixes() {
		if err := s.fsys.Remove(s.path(suffix) + deletedSuffix); err != nil && !vfs.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("remove deleted segment file: %w", err))
		}
	}
	return errors.Join(errs...)
}
