package commitlog

import (
	"errors"
	"fmt"
	"io"

	"github.com/sluice-io/sluice/internal/vfs"
)

// FileSlice is a byte range of a segment file. The network layer can
// sendfile it from File.(vfs.OSFile).OS() at Pos; the file stays open at
// least file.delete.delay.ms after its segment is deleted.
type FileSlice struct {
	File vfs.File
	Pos  int64
	Size int64
}

// ReadResult is the outcome of a Read: whole batches, without copying.
type ReadResult struct {
	Slices []FileSlice
	// FirstOffset is the base offset of the first batch returned (it can be
	// below the offset asked for, when that offset is inside a batch).
	FirstOffset int64
	// EndOffset is the offset after the last batch returned (FirstOffset
	// when none): the upper bound for CollectAbortedTxns.
	EndOffset int64
	// Size is the total size of the slices.
	Size int64
}

// WriteTo copies the result's bytes to w (TLS connections, tests).
func (r ReadResult) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, s := range r.Slices {
		m, err := io.Copy(w, io.NewSectionReader(s.File, s.Pos, s.Size))
		n += m
		if err != nil {
			return n, fmt.Errorf("read segment bytes: %w", err)
		}
		if m != s.Size {
			return n, fmt.Errorf("read segment bytes: %w", io.ErrUnexpectedEOF)
		}
	}
	return n, nil
}

// Bytes returns a copy of the result's bytes.
func (r ReadResult) Bytes() ([]byte, error) {
	buf := make([]byte, 0, r.Size)
	for _, s := range r.Slices {
		start := len(buf)
		buf = buf[:start+int(s.Size)]
		if _, err := s.File.ReadAt(buf[start:], s.Pos); err != nil {
			return nil, fmt.Errorf("read segment bytes: %w", err)
		}
	}
	return buf, nil
}

// Read returns whole batches starting with the one that holds offset, up to
// maxBytes in total and only batches that end at or below maxOffset
// (exclusive: the high watermark or last stable offset; pass the log end
// offset for no bound). With minOneBatch the first batch is returned even
// when larger than maxBytes (KIP-74). Reading at the log end offset returns
// nothing; below the log start offset or above the log end offset it
// returns ErrOffsetOutOfRange.
func (l *Log) Read(offset int64, maxBytes int32, maxOffset int64, minOneBatch bool) (ReadResult, error) {
	l.mu.RLock()
	if err := l.checkUsableLocked(); err != nil {
		l.mu.RUnlock()
		return ReadResult{}, err
	}
	segs := l.mu.segments
	start, leo := l.mu.logStartOffset, l.activeLocked().nextOffset
	l.mu.RUnlock()

	if offset < start || offset > leo {
		return ReadResult{}, fmt.Errorf("%w: %d not in [%d, %d] of %s", ErrOffsetOutOfRange, offset, start, leo, l.tp)
	}
	res := ReadResult{FirstOffset: offset, EndOffset: offset}
	if offset == leo || offset >= maxOffset {
		return res, nil
	}
	// The segment holding offset is the last one whose base is <= offset;
	// if it holds nothing at or above offset (a gap), the next one serves.
	i := len(segs) - 1
	for i > 0 && segs[i].baseOffset > offset {
		i--
	}
	for ; i < len(segs); i++ {
		r, err := segs[i].read(offset, int64(maxBytes), maxOffset, minOneBatch)
		if err != nil {
			return ReadResult{}, l.readFailure(err)
		}
		if r.damage != nil {
			// The batches before the damage are served; the next read,
			// from the damaged batch, fails.
			l.reportCorruption(r.damage)
		}
		if r.found {
			res.FirstOffset, res.EndOffset = r.first, max(r.end, r.first)
			if r.slice.Size > 0 {
				res.Slices = []FileSlice{r.slice}
				res.Size = r.slice.Size
			}
			return res, nil
		}
	}
	return res, nil
}

// readFailure takes the log offline on a read I/O error, as Kafka does.
// Bytes that do not parse as a batch fail only this read (CORRUPT_MESSAGE)
// and are reported once.
func (l *Log) readFailure(err error) error {
	if isFormatError(err) || errors.Is(err, ErrCorruptBatch) {
		l.reportCorruption(err)
		return fmt.Errorf("read %s: %w: %w", l.tp, ErrCorruptBatch, err)
	}
	l.markOffline(err)
	return fmt.Errorf("read %s: %w: %w", l.tp, ErrOffline, err)
}

// segmentRead is what one segment gives a Read.
type segmentRead struct {
	slice      FileSlice
	first, end int64 // the first batch's base offset, the offset after the last
	found      bool  // false when the segment has no batch at or after the offset
	damage     error // a *CorruptBatchError met after the batches returned
}

// read returns the segment's batches from the one holding offset. Damage
// after at least one intact batch ends the batches returned (r.damage);
// damage before any is the error.
func (s *segment) read(offset, maxBytes, maxOffset int64, minOneBatch bool) (segmentRead, error) {
	pos, h, found, err := s.translateOffset(offset)
	if err != nil || !found {
		return segmentRead{}, err
	}
	r := segmentRead{first: h.BaseOffset, found: true}
	size := s.size.Load()
	end, endOffset := pos, h.BaseOffset
	p, hdr := pos, h
	for {
		if hdr.NextOffset() > maxOffset {
			break
		}
		n := hdr.Size()
		if end+n-pos > maxBytes && !(minOneBatch && end == pos) {
			break
		}
		end += n
		p += n
		endOffset = hdr.NextOffset()
		if end-pos >= maxBytes {
			break
		}
		hdr, err = readHeader(s.log, p, size)
		if err == io.EOF {
			break
		}
		if err != nil {
			if err = s.readError(p, endOffset, err); !errors.Is(err, ErrCorruptBatch) {
				return segmentRead{}, err
			}
			r.damage = err
			break
		}
		if p+hdr.Size() > size {
			break
		}
	}
	r.slice, r.end = FileSlice{File: s.log, Pos: pos, Size: end - pos}, endOffset
	return r, nil
}
