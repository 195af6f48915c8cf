package cleaner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// worker is one cleaner thread's state: its offset map, buffers and
// codecs, reused from one clean to the next and never shared.
type worker struct {
	offsets  *offsetMap
	comp     compressor
	readBuf  []byte
	writeBuf []byte
	ioBytes  int
	// throttle is the cleaner's, shared by every worker; nil: none.
	throttle *throttle
}

// throttleIO reports n bytes read or written to the throttle.
func (w *worker) throttleIO(ctx context.Context, n int64) error {
	if w.throttle == nil {
		return nil
	}
	return w.throttle.wait(ctx, n)
}

func newWorker(opts Options) *worker {
	threads := int64(max(opts.Threads, 1))
	return &worker{
		offsets: newOffsetMap(opts.DedupeBufferSize/threads, opts.DedupeBufferLoadFactor),
		// Half of each thread's share of the I/O buffer reads, half writes.
		ioBytes: max(opts.IOBufferSize/int(threads)/2, 4096),
	}
}

// cleanResult is what one clean of a log did.
type cleanResult struct {
	// firstDirty and mapEnd bound the dirty range the clean covered: the
	// log is clean below mapEnd now (the new cleaner checkpoint).
	firstDirty, mapEnd int64
	// horizon is the earliest delete horizon of the tombstones left, -1
	// when none: the log is worth cleaning again then.
	horizon                  int64
	bytesRead, bytesWritten  int64
	segmentsBefore, segments int
	stats                    filterStats
}

// uncleanableOffset is the first offset a clean may not touch: the active
// segment, the last stable offset, and segments younger than
// min.compaction.lag.ms (Kafka's firstUncleanableDirtyOffset).
func uncleanableOffset(st commitlog.CleanState, opts commitlog.Options, firstDirty int64, now time.Time) int64 {
	u := min(st.ActiveBaseOffset, st.StableOffset)
	if opts.MinCompactionLag > 0 {
		cutoff := now.Add(-opts.MinCompactionLag).UnixMilli()
		for _, s := range st.Segments {
			if s.NextOffset > firstDirty && s.MaxTimestamp > cutoff {
				u = min(u, s.BaseOffset)
				break
			}
		}
	}
	return u
}

// cleanLog cleans l from its log start offset up to as much of the dirty
// range [firstDirty, uncleanable) as the offset map covers.
func (w *worker) cleanLog(ctx context.Context, l *commitlog.Log, firstDirty int64, now time.Time) (cleanResult, error) {
	st, err := l.CleanState()
	if err != nil {
		return cleanResult{}, err
	}
	opts := l.Options()
	res := cleanResult{firstDirty: firstDirty, mapEnd: firstDirty, horizon: -1, segmentsBefore: len(st.Segments) + 1}
	uncleanable := uncleanableOffset(st, opts, firstDirty, now)
	txns, err := l.CollectAbortedTxns(st.LogStartOffset, st.LogEndOffset)
	if err != nil {
		return res, err
	}
	aborted := newAbortedTxns(txns)
	w.offsets.clear()
	if firstDirty < uncleanable {
		end, read, err := w.buildOffsetMap(ctx, l, firstDirty, uncleanable, aborted)
		res.bytesRead += read
		if err != nil {
			return res, err
		}
		res.mapEnd = end
	}
	filter := &batchFilter{offsets: w.offsets, mapEnd: res.mapEnd, nowMs: now.UnixMilli(),
		deleteRetentionMs: opts.DeleteRetention.Milliseconds(), producerLast: st.ProducerLastOffsets,
		producerMarkerEpoch: st.ProducerMarkerEpochs, txns: newTxnTracker(txns),
		comp: &w.comp, decoder: l.Decoder(), horizon: -1}
	for _, g := range groupSegments(st, opts, res.mapEnd) {
		if err := w.cleanGroup(ctx, l, g, st.LogStartOffset, filter, &res); err != nil {
			return res, err
		}
	}
	res.horizon = filter.horizon
	res.stats = filter.stats
	if after, err := l.CleanState(); err == nil {
		res.segments = len(after.Segments) + 1
	}
	return res, nil
}

// buildOffsetMap records the latest offset of every key in [from, to),
// skipping control batches and aborted transactions' data, and returns
// where it stopped: to, or the first batch that did not fit.
func (w *worker) buildOffsetMap(ctx context.Context, l *commitlog.Log, from, to int64, aborted abortedTxns) (int64, int64, error) {
	end := from
	full := false
	read, err := w.forEachBatch(ctx, l, from, to, func(h records.Header, batch []byte) error {
		if full {
			return nil
		}
		if h.IsControl() || aborted.aborted(h) {
			end = h.NextOffset()
			return nil
		}
		if w.offsets.used+int(h.RecordCount) > w.offsets.capacity() {
			full = true
			return nil
		}
		err := l.Decoder().ForEachRecord(ctx, batch, func(r records.Record) error {
			if r.Key != nil {
				w.offsets.put(r.Key, r.Offset(h))
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
		}
		end = h.NextOffset()
		return nil
	})
	if err != nil {
		return from, read, err
	}
	if end == from && full {
		return from, read, fmt.Errorf("log.cleaner.dedupe.buffer.size holds %d keys, too few for one batch at %d of %s",
			w.offsets.capacity(), from, l.TopicPartition())
	}
	if !full {
		end = to
	}
	return end, read, nil
}

// segmentGroup is a run of segments cleaned into one.
type segmentGroup struct {
	first, last commitlog.CleanSegment
}

// groupSegments groups the inactive segments holding offsets below mapEnd
// into runs that fit one segment: size within segment.bytes, index entries
// within one index, offsets within a 32-bit delta of the base (Kafka's
// groupSegmentsBySize).
func groupSegments(st commitlog.CleanState, opts commitlog.Options, mapEnd int64) []segmentGroup {
	var groups []segmentGroup
	segs := st.Segments
	for len(segs) > 0 && segs[0].BaseOffset < mapEnd {
		g := segmentGroup{first: segs[0], last: segs[0]}
		size, entries := segs[0].Size, segs[0].IndexEntries+1
		n := 1
		for n < len(segs) && segs[n].BaseOffset < mapEnd {
			s := segs[n]
			if size+s.Size > opts.SegmentBytes || entries+s.IndexEntries+1 > st.MaxIndexEntries ||
				s.NextOffset-1-g.first.BaseOffset > math.MaxInt32 {
				break
			}
			size += s.Size
			entries += s.IndexEntries + 1
			g.last = s
			n++
		}
		groups = append(groups, g)
		segs = segs[n:]
	}
	return groups
}

// cleanGroup writes the kept batches of a group into a cleaned segment and
// swaps it in.
func (w *worker) cleanGroup(ctx context.Context, l *commitlog.Log, g segmentGroup, logStart int64, f *batchFilter, res *cleanResult) error {
	cs, err := l.BeginCleanedSegment(g.first.BaseOffset, g.last.BaseOffset+1)
	if err != nil {
		return err
	}
	w.writeBuf = w.writeBuf[:0]
	var written int64
	flush := func() error {
		if len(w.writeBuf) == 0 {
			return nil
		}
		if err := cs.Append(w.writeBuf); err != nil {
			return err
		}
		written += int64(len(w.writeBuf))
		n := int64(len(w.writeBuf))
		w.writeBuf = w.writeBuf[:0]
		return w.throttleIO(ctx, n)
	}
	read, err := w.forEachBatch(ctx, l, max(g.first.BaseOffset, logStart), cs.EndOffset(), func(h records.Header, batch []byte) error {
		var err error
		if w.writeBuf, err = f.filter(ctx, w.writeBuf, batch, h); err != nil {
			return err
		}
		if len(w.writeBuf) >= w.ioBytes {
			return flush()
		}
		return nil
	})
	res.bytesRead += read
	if err == nil {
		err = flush()
	}
	if err != nil {
		return errors.Join(err, cs.Abort())
	}
	for _, t := range f.txns.takeDropped() {
		cs.DropAbortedTxn(t.ProducerID, t.LastOffset)
	}
	if err := l.ReplaceSegments(cs); err != nil {
		return err
	}
	res.bytesWritten += written
	return nil
}

// forEachBatch calls fn with every whole batch of l in [from, to), read
// through the log in chunks of the worker's I/O buffer. It stops early when
// ctx ends.
func (w *worker) forEachBatch(ctx context.Context, l *commitlog.Log, from, to int64, fn func(records.Header, []byte) error) (int64, error) {
	var read int64
	offset := from
	for offset < to {
		if err := ctx.Err(); err != nil {
			return read, err
		}
		rr, err := l.Read(offset, int32(min(w.ioBytes, math.MaxInt32)), to, true)
		if err != nil {
			return read, fmt.Errorf("read %s at %d: %w", l.TopicPartition(), offset, err)
		}
		if rr.Size == 0 || rr.EndOffset <= offset {
			return read, nil
		}
		if int64(cap(w.readBuf)) < rr.Size {
			w.readBuf = make([]byte, rr.Size)
		}
		buf := w.readBuf[:rr.Size]
		pos := 0
		for _, s := range rr.Slices {
			if _, err := s.File.ReadAt(buf[pos:pos+int(s.Size)], s.Pos); err != nil {
				return read, fmt.Errorf("read %s at %d: %w", l.TopicPartition(), offset, err)
			}
			pos += int(s.Size)
		}
		read += rr.Size
		if err := w.throttleIO(ctx, rr.Size); err != nil {
			return read, err
		}
		rest, err := records.Batches(buf, fn)
		if err != nil {
			return read, err
		}
		if rest != len(buf) {
			return read, fmt.Errorf("read %s at %d: %d bytes are not a whole batch", l.TopicPartition(), offset, len(buf)-rest)
		}
		offset = rr.EndOffset
	}
	return read, nil
}
