package cleaner

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-io/sluice/internal/records"
)

// errFirstRecord stops a walk after a batch's first record.
var errFirstRecord = errors.New("first record read")

// filterControl decides what stays of a control batch, as Kafka's cleaner
// does with checkBatchRetention for control batches:
//   - a marker whose transaction still has a batch before it stays as is;
//   - once none is left it is discardable: it first gets a delete horizon
//     (now + delete.retention.ms) in its header, so consumers that read
//     the transaction's data have time to read the marker too, and goes in
//     a clean after the horizon;
//   - a producer's marker that carries what must survive of it (its epoch,
//     when no data batch of it is left) stays, emptied once discardable
//     and past its horizon;
//   - an empty control batch (a marker cleaned before) goes unless it is
//     such a producer's.
func (f *batchFilter) filterControl(ctx context.Context, dst, batch []byte, h records.Header) ([]byte, error) {
	typ, hasRecord, err := f.controlType(ctx, batch)
	if err != nil {
		return dst, fmt.Errorf("control batch at offset %d: %w", h.BaseOffset, err)
	}
	if !h.HasProducerID() || !f.txns.onMarker(h, typ, hasRecord) {
		return append(dst, batch...), nil
	}
	keepEmpty := f.lastOfProducer(h)
	switch {
	case !hasRecord:
		if keepEmpty {
			return append(dst, batch...), nil
		}
		f.stats.markersRemoved++
		return dst, nil
	case h.HasDeleteHorizon() && h.BaseTimestamp <= f.nowMs:
		f.stats.markersRemoved++
		if keepEmpty {
			return appendEmptyBatch(dst, h), nil
		}
		return dst, nil
	case h.HasDeleteHorizon():
		f.noteHorizon(h.BaseTimestamp)
		return append(dst, batch...), nil
	}
	horizon := f.nowMs + f.deleteRetentionMs
	f.noteHorizon(horizon)
	return f.withHorizon(ctx, dst, batch, h, horizon)
}

// controlType reads the control type of the batch's first record; hasRecord
// is false for an empty batch.
func (f *batchFilter) controlType(ctx context.Context, batch []byte) (typ int16, hasRecord bool, err error) {
	err = f.decoder.ForEachRecord(ctx, batch, func(r records.Record) error {
		k, err := records.ParseControlKey(r.Key)
		if err != nil {
			return err
		}
		typ, hasRecord = k.Type, true
		return errFirstRecord
	})
	if errors.Is(err, errFirstRecord) {
		err = nil
	}
	return typ, hasRecord, err
}

// lastOfProducer is Kafka's isBatchLastRecordOfProducer for a control
// batch: the producer the log tracks has no data batch left and this
// marker has its epoch.
func (f *batchFilter) lastOfProducer(h records.Header) bool {
	epoch, ok := f.producerMarkerEpoch[h.ProducerID]
	return ok && epoch == h.ProducerEpoch
}

// withHorizon rewrites a control batch with its records unchanged and the
// delete horizon in its header (KIP-534: the base timestamp becomes the
// horizon and the record timestamps are re-based on it).
func (f *batchFilter) withHorizon(ctx context.Context, dst, batch []byte, h records.Header, horizon int64) ([]byte, error) {
	f.recBuf = f.recBuf[:0]
	maxTs := int64(-1)
	err := f.decoder.ForEachRecord(ctx, batch, func(r records.Record) error {
		ts := h.BaseTimestamp + r.TimestampDelta
		maxTs = max(maxTs, ts)
		f.recBuf = appendRecord(f.recBuf, r, ts-horizon)
		return nil
	})
	if err != nil {
		return dst, fmt.Errorf("control batch at offset %d: %w", h.BaseOffset, err)
	}
	if h.IsLogAppendTime() {
		maxTs = h.MaxTimestamp
	}
	start := len(dst)
	dst = append(dst, make([]byte, records.HeaderSize)...)
	if dst, err = f.comp.compress(dst, h.Compression(), f.recBuf); err != nil {
		return dst[:start], err
	}
	putHeader(dst[start:], h, uint16(h.Attributes)|records.DeleteHorizonBit, horizon, maxTs, h.RecordCount)
	return dst, nil
}
