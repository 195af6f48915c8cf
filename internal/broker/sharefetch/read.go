package sharefetch

import (
	"errors"
	"fmt"
	"io"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// acquireReadChunk is how much of a log read an acquisition copies first;
// each further step copies four times as much again.
const acquireReadChunk = 1 << 20

// readForAcquire copies the leading whole batches of rr that an
// acquisition of up to maxRecords records from offset can use: it stops
// once they hold maxRecords offsets at or past offset, or at the read's
// end. Why: the log read is bounded by the request's bytes (fetch.max.bytes,
// 50 MiB by default) while an acquisition takes max.poll.records (500);
// copying the whole read made every ShareFetch copy some hundred times the
// bytes it answered with. The prefix is what a read with a smaller byte
// limit returns (whole batches, the first one always whole), which a
// client may ask for anyway.
func readForAcquire(rr commitlog.ReadResult, offset int64, maxRecords int) ([]byte, error) {
	var buf []byte
	for limit := int64(acquireReadChunk); ; limit *= 4 {
		n := min(limit, rr.Size)
		var err error
		if buf, err = appendRange(buf, rr, n); err != nil {
			return nil, err
		}
		if n == rr.Size {
			return buf, nil
		}
		var held int64
		whole, err := records.Batches(buf, func(h records.Header, _ []byte) error {
			held += max(0, h.LastOffset()-max(h.BaseOffset, offset)+1)
			return nil
		})
		if err != nil {
			return buf, nil // the caller's parse reports the corruption
		}
		if whole > 0 && held >= int64(maxRecords) {
			return buf[:whole], nil
		}
	}
}

// appendRange extends buf, which holds rr's first len(buf) bytes, to its
// first n bytes.
func appendRange(buf []byte, rr commitlog.ReadResult, n int64) ([]byte, error) {
	var pos int64 // offset in rr of the current slice's first byte
	for _, s := range rr.Slices {
		have := int64(len(buf))
		if have >= n {
			break
		}
		if have < pos+s.Size {
			from := have - pos
			take := min(s.Size-from, n-have)
			start := len(buf)
			buf = append(buf, make([]byte, take)...)
			m, err := s.File.ReadAt(buf[start:], s.Pos+from)
			if err != nil && !(errors.Is(err, io.EOF) && int64(m) == take) {
				return nil, fmt.Errorf("read segment bytes: %w", err)
			}
		}
		pos += s.Size
	}
	return buf, nil
}
