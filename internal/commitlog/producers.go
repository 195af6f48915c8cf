package commitlog

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sluice-io/sluice/internal/commitlog/producerstate"
	"github.com/sluice-io/sluice/internal/records"
)

// errStopIteration ends a record walk early.
var errStopIteration = errors.New("stop")

// decodeMarker reads the transaction marker of a control batch. A control
// batch that is not a commit or abort marker yields ok false.
func decodeMarker(batch []byte) (producerstate.Marker, bool, error) {
	var mk producerstate.Marker
	ok := false
	err := records.ForEachRecord(batch, func(r records.Record) error {
		k, err := records.ParseControlKey(r.Key)
		if err != nil {
			return err
		}
		if k.Type != records.ControlAbort && k.Type != records.ControlCommit {
			return errStopIteration
		}
		v, err := records.ParseEndTxnMarker(r.Value)
		if err != nil {
			return err
		}
		mk = producerstate.Marker{Commit: k.Type == records.ControlCommit, CoordinatorEpoch: v.CoordinatorEpoch}
		ok = true
		return errStopIteration
	})
	if err != nil && !errors.Is(err, errStopIteration) {
		return mk, false, err
	}
	return mk, ok, nil
}

// stageProducers runs the producer-state checks of an append. For a client
// append a duplicate batch returns its original offsets in dup.
func (l *Log) stageProducers(checks appendChecks, batches []byte, headers []records.Header) (*producerstate.Append, *producerstate.Verdict, error) {
	a := l.mu.producers.BeginAppend(checks.origin)
	if checks.verify {
		a.RequireVerification(checks.guard)
	}
	pos := 0
	for _, h := range headers {
		b := batches[pos : pos+int(h.Size())]
		pos += int(h.Size())
		if h.IsControl() {
			if !h.HasProducerID() {
				continue
			}
			mk, ok, err := decodeMarker(b)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: %w", ErrCorruptBatch, err)
			}
			if ok {
				mk.TxnVersion = checks.markerVersion
				if err := a.AddMarker(h, mk); err != nil {
					return nil, nil, err
				}
			}
			continue
		}
		v, err := a.AddBatch(h)
		if err != nil {
			return nil, nil, err
		}
		if v.Duplicate {
			return nil, &v, nil
		}
	}
	return a, nil, nil
}

// loadProducerStateLocked rebuilds the producer state for the log as it is
// now: the newest snapshot at or below the log end offset, then the batches
// after it replayed (Kafka's loadProducerState).
func (l *Log) loadProducerStateLocked() error {
	leo := l.activeLocked().nextOffset
	from, err := l.mu.producers.TruncateAndReload(l.mu.logStartOffset, leo)
	if err != nil {
		return l.ioFailure("load producer state", err)
	}
	for _, s := range l.mu.segments {
		if s.nextOffset <= from {
			continue
		}
		if err := l.replaySegmentProducers(s, from); err != nil {
			return err
		}
	}
	l.mu.producers.UpdateMapEndOffset(leo)
	return nil
}

// replaySegmentProducers feeds the batches of s at or after from to the
// producer state without checks.
func (l *Log) replaySegmentProducers(s *segment, from int64) error {
	size := s.size.Load()
	pos := s.index.lookup(from).Position
	var buf []byte
	for pos < size {
		h, err := readHeader(s.log, pos, size)
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return l.readFailure(err)
		}
		if h.LastOffset() >= from && h.HasProducerID() {
			a := l.mu.producers.BeginAppend(producerstate.OriginReplication)
			if h.IsControl() {
				buf = append(buf[:0], make([]byte, h.Size())...)
				if _, err := s.log.ReadAt(buf, pos); err != nil {
					return l.readFailure(err)
				}
				mk, ok, err := decodeMarker(buf)
				if err != nil {
					return l.readFailure(fmt.Errorf("%w: %w", ErrCorruptBatch, err))
				}
				if ok {
					if err := a.AddMarker(h, mk); err != nil {
						return fmt.Errorf("replay producer state of %s: %w", l.tp, err)
					}
				}
			} else if _, err := a.AddBatch(h); err != nil {
				// The leader accepted the batch; a follower or recovery replays it anyway.
				l.logger.Warn("producer state replay", "partition", l.tp.String(), "offset", h.BaseOffset, "err", err)
				pos += h.Size()
				continue
			}
			if err := recordAborts(s, a.Commit()); err != nil {
				return l.ioFailure("rebuild transaction index", err)
			}
		}
		pos += h.Size()
	}
	return nil
}

// recordAborts adds the aborted ones of completed transactions to the
// transaction index of the segment holding their markers.
func recordAborts(s *segment, completed []producerstate.CompletedTxn) error {
	for _, ct := range completed {
		if !ct.IsAborted {
			continue
		}
		if err := s.txnIndex.append(AbortedTxn{ProducerID: ct.ProducerID, FirstOffset: ct.FirstOffset,
			LastOffset: ct.LastOffset, LastStableOffset: ct.LastStableOffset}); err != nil {
			return err
		}
	}
	return nil
}

// CollectAbortedTxns returns the aborted transactions overlapping
// [fetchOffset, upperBound) for a read_committed fetch: upperBound is the
// ReadResult's EndOffset. It searches the transaction indexes from the
// segment holding fetchOffset on, until an entry shows no later one can
// overlap.
func (l *Log) CollectAbortedTxns(fetchOffset, upperBound int64) ([]AbortedTxn, error) {
	l.mu.RLock()
	if err := l.checkUsableLocked(); err != nil {
		l.mu.RUnlock()
		return nil, err
	}
	segs := l.mu.segments
	l.mu.RUnlock()
	i := len(segs) - 1
	for i > 0 && segs[i].baseOffset > fetchOffset {
		i--
	}
	var out []AbortedTxn
	for ; i < len(segs); i++ {
		found, complete := segs[i].txnIndex.collect(fetchOffset, upperBound)
		out = append(out, found...)
		if complete {
			break
		}
	}
	return out, nil
}

// LastStableOffset is the offset below which every transaction is decided
// and its marker replicated, bounded by the high watermark hw
// (read_committed fetches stop there). A completed transaction counts as
// unstable until SetHighWatermark passes its marker, as in Kafka.
func (l *Log) LastStableOffset(hw int64) int64 {
	if first, ok := l.FirstUnstableOffset(); ok && first < hw {
		return first
	}
	return hw
}

// FirstUnstableOffset is the first offset of the oldest open transaction;
// the last stable offset is the smaller of it and the high watermark.
func (l *Log) FirstUnstableOffset() (int64, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.producers.FirstUnstableOffset()
}

// RemoveExpiredProducers drops producers idle longer than
// producer.id.expiration.ms; the Manager's scheduler calls it.
func (l *Log) RemoveExpiredProducers(now time.Time, expiration time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mu.producers.RemoveExpired(now.UnixMilli(), expiration.Milliseconds())
}

// ProducerEntry returns a producer's state (tests, DescribeProducers).
func (l *Log) ProducerEntry(producerID int64) (producerstate.Entry, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.producers.Entry(producerID)
}
