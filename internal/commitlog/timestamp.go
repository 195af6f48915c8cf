package commitlog

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sluice-io/sluice/internal/records"
)

// TimestampOffset is the answer to a ListOffsets timestamp query.
type TimestampOffset struct {
	Offset    int64
	Timestamp int64
}

// OffsetForTimestamp returns the earliest offset whose timestamp is >= ts
// (ListOffsets with a timestamp), found through the time index; found is
// false when every record is older.
func (l *Log) OffsetForTimestamp(ts int64) (TimestampOffset, bool, error) {
	l.mu.RLock()
	if err := l.checkUsableLocked(); err != nil {
		l.mu.RUnlock()
		return TimestampOffset{}, false, err
	}
	segs, start := l.mu.segments, l.mu.logStartOffset
	var seg *segment
	for _, s := range segs {
		if s.maxTimestamp >= ts {
			seg = s
			break
		}
	}
	l.mu.RUnlock()
	if seg == nil {
		return TimestampOffset{}, false, nil
	}
	from := max(seg.timeIndex.lookup(ts).Offset, start)
	pos := seg.index.lookup(from).Position
	size := seg.size.Load()
	for {
		h, err := readHeader(seg.log, pos, size)
		if err == io.EOF {
			return TimestampOffset{}, false, nil
		}
		if err != nil {
			return TimestampOffset{}, false, l.readFailure(err)
		}
		if h.MaxTimestamp >= ts && h.LastOffset() >= start {
			to, ok, err := seg.recordAtOrAfter(l.decoder, pos, h, func(off, rts int64) bool { return rts >= ts && off >= start })
			if err != nil {
				return TimestampOffset{}, false, l.undecodable(err)
			}
			if ok {
				return to, true, nil
			}
		}
		pos += h.Size()
	}
}

// LastTimestampOffset returns the record with the largest timestamp and its
// offset (ListOffsets MAX_TIMESTAMP, KIP-734); found is false for an empty log.
func (l *Log) LastTimestampOffset() (TimestampOffset, bool, error) {
	l.mu.RLock()
	if err := l.checkUsableLocked(); err != nil {
		l.mu.RUnlock()
		return TimestampOffset{}, false, err
	}
	var seg *segment
	maxTS, maxOff := int64(-1), int64(-1)
	for _, s := range l.mu.segments {
		if s.maxTimestamp > maxTS {
			seg, maxTS, maxOff = s, s.maxTimestamp, s.offsetOfMaxTimestamp
		}
	}
	l.mu.RUnlock()
	if seg == nil {
		return TimestampOffset{}, false, nil
	}
	pos, h, found, err := seg.translateOffset(maxOff)
	if err != nil {
		return TimestampOffset{}, false, l.readFailure(err)
	}
	if !found {
		return TimestampOffset{}, false, nil
	}
	to, ok, err := seg.recordAtOrAfter(l.decoder, pos, h, func(_, rts int64) bool { return rts == maxTS })
	if err != nil {
		return TimestampOffset{}, false, l.undecodable(err)
	}
	if !ok {
		return TimestampOffset{Offset: maxOff, Timestamp: maxTS}, true, nil
	}
	return to, true, nil
}

// Decoder is what decodes this log's records: the per-batch cap and the
// broker's decompression budget (nil: the default cap, no budget). Validate
// takes it too, so whatever Produce accepts reads back within the same
// limits.
func (l *Log) Decoder() *records.Decoder { return l.decoder }

// undecodableBatchError is a stored batch whose header reads but whose
// records do not decode within the decoder's limits (damage under a valid
// CRC, or a batch an older build accepted): the lookups that reach it fail
// with CORRUPT_MESSAGE; fetches, which do not decode, serve it as stored.
type undecodableBatchError struct {
	file   string
	pos    int64
	offset int64
	err    error
}

func (e *undecodableBatchError) Error() string {
	return fmt.Sprintf("record batch in %s at position %d (offset %d) does not decode: %v", e.file, e.pos, e.offset, e.err)
}

func (e *undecodableBatchError) Unwrap() []error { return []error{ErrCorruptBatch, e.err} }

// undecodableKey marks an undecodable batch already reported in l.corrupt.
type undecodableKey struct {
	file string
	pos  int64
}

// undecodable reports, once per batch, a batch whose records did not
// decode for a timestamp lookup (logged, counted with the damaged batches):
// that lookup fails, nothing else does.
func (l *Log) undecodable(err error) error {
	var ue *undecodableBatchError
	if errors.As(err, &ue) {
		if _, seen := l.corrupt.LoadOrStore(undecodableKey{ue.file, ue.pos}, true); !seen {
			l.logger.Error("record batch does not decode: ListOffsets by timestamp that reaches it fails with CORRUPT_MESSAGE, fetches serve it as stored",
				"partition", l.tp.String(), "file", ue.file, "position", ue.pos, "offset", ue.offset, "err", ue.err)
			if l.onCorrupt != nil {
				l.onCorrupt(&CorruptBatchError{File: ue.file, Position: ue.pos, Offset: ue.offset, Err: ue.err})
			}
		}
	}
	return l.readFailure(err)
}

// recordAtOrAfter reads the batch at pos and returns its first record for
// which match(offset, timestamp) holds. The records are decoded by dec,
// one at a time: nothing of a record but its offset and timestamp is kept,
// whatever it carries (headers are skipped over).
func (s *segment) recordAtOrAfter(dec *records.Decoder, pos int64, h records.Header, match func(offset, ts int64) bool) (TimestampOffset, bool, error) {
	batch := make([]byte, h.Size())
	if _, err := s.log.ReadAt(batch, pos); err != nil {
		return TimestampOffset{}, false, fmt.Errorf("read %s at %d: %w", s.path(logSuffix), pos, err)
	}
	var out TimestampOffset
	found := false
	errFound := fmt.Errorf("found")
	err := dec.ForEachRecord(context.Background(), batch, func(r records.Record) error {
		if off, ts := r.Offset(h), r.Timestamp(h); match(off, ts) {
			out, found = TimestampOffset{Offset: off, Timestamp: ts}, true
			return errFound
		}
		return nil
	})
	if err != nil && err != errFound {
		return TimestampOffset{}, false, &undecodableBatchError{file: s.path(logSuffix), pos: pos, offset: h.BaseOffset, err: err}
	}
	return out, found, nil
}
