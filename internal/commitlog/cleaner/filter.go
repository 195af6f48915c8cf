package cleaner

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/sluice-io/sluice/internal/records"
)

// batchFilter decides, batch by batch, what a clean keeps (Kafka's
// LogCleaner filter over MemoryRecords.filterTo):
//   - a record at or above mapEnd is kept: the offset map does not cover it;
//   - a record without a key goes (a compacted log cannot hold one);
//   - a record older than the latest offset of its key goes;
//   - a tombstone (null value) stays until its batch's delete horizon
//     (KIP-534) has passed. A kept batch with tombstones and no horizon
//     yet gets one, now + delete.retention.ms, in its header;
//   - data batches of aborted transactions go;
//   - a transaction marker stays while a batch of its transaction is left
//     before it; then, as a tombstone, it gets a delete horizon (now +
//     delete.retention.ms) and goes once that has passed (Kafka's
//     isControlBatch rules; see filterControl);
//   - a batch left with no record goes, unless it is the last data batch
//     of a producer the log still tracks (or, for a producer with no data
//     batch, a marker of its epoch): it then stays as an empty batch
//     (header only, offsets and sequences kept), so the producer's last
//     sequence or epoch survives, as in Kafka.
//
// Kept batches keep their base offset and last offset delta, producer id,
// epoch, base sequence and leader epoch; survivors' offsets never change.
type batchFilter struct {
	offsets           *offsetMap
	mapEnd            int64
	nowMs             int64
	deleteRetentionMs int64
	producerLast      map[int64]int64
	// producerMarkerEpoch is the epoch of producers tracked without a
	// data batch (commitlog.CleanState.ProducerMarkerEpochs).
	producerMarkerEpoch map[int64]int16
	txns                *txnTracker
	comp                *compressor
	// decoder is the log's: the same per-batch cap and decompression
	// budget as Produce and the other reads.
	decoder *records.Decoder

	recBuf  []byte
	stats   filterStats
	horizon int64 // earliest delete horizon among kept tombstone and marker batches; -1 when none
}

// filterStats count what the filter saw and kept.
type filterStats struct {
	batchesRead, recordsRead, recordsKept, markersRemoved int64
}

// keptRecords is what the first pass over a batch's records found.
type keptRecords struct {
	count               int32
	removed, tombstones bool
	firstTimestampDelta int64
}

// maxKeptScratch keeps one huge rewritten batch from pinning its buffer.
const maxKeptScratch = 8 << 20

// filter appends what survives of batch (header h) to dst. The batch is
// decoded once and its records walked twice, keeping no list of them: a
// first pass decides, a second (only for a batch that changes) writes the
// kept records.
func (f *batchFilter) filter(ctx context.Context, dst, batch []byte, h records.Header) ([]byte, error) {
	f.stats.batchesRead++
	if h.IsControl() {
		return f.filterControl(ctx, dst, batch, h)
	}
	out := dst
	err := f.decoder.Records(ctx, batch, func(set *records.RecordSet) error {
		var err error
		out, err = f.filterRecords(dst, batch, set)
		return err
	})
	if err != nil {
		return dst, fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err)
	}
	return out, nil
}

func (f *batchFilter) filterRecords(dst, batch []byte, set *records.RecordSet) ([]byte, error) {
	h := set.Header()
	discardAll := f.txns.onData(h)
	var k keptRecords
	err := set.Each(func(r records.Record) error {
		f.stats.recordsRead++
		if discardAll || !f.retain(h, r) {
			k.removed = true
			return nil
		}
		if k.count == 0 {
			k.firstTimestampDelta = r.TimestampDelta
		}
		k.count++
		if r.Value == nil {
			k.tombstones = true
		}
		return nil
	})
	if err != nil {
		return dst, err
	}
	f.stats.recordsKept += int64(k.count)
	if k.count == 0 {
		if last, ok := f.producerLast[h.ProducerID]; ok && h.HasProducerID() && last == h.LastOffset() {
			return appendEmptyBatch(dst, h), nil
		}
		return dst, nil
	}
	setHorizon := k.tombstones && !h.HasDeleteHorizon()
	if k.tombstones {
		horizon := h.BaseTimestamp
		if setHorizon {
			horizon = f.nowMs + f.deleteRetentionMs
		}
		f.noteHorizon(horizon)
	}
	if !k.removed && !setHorizon {
		return append(dst, batch...), nil
	}
	return f.rebuild(dst, set, k, setHorizon)
}

// noteHorizon keeps the earliest delete horizon left, so the cleaner comes
// back once it has passed.
func (f *batchFilter) noteHorizon(horizon int64) {
	if f.horizon < 0 || horizon < f.horizon {
		f.horizon = horizon
	}
}

// retain is Kafka's shouldRetainRecord for a data batch.
func (f *batchFilter) retain(h records.Header, r records.Record) bool {
	offset := r.Offset(h)
	if offset >= f.mapEnd {
		return true
	}
	if r.Key == nil {
		return false
	}
	if latest := f.offsets.get(r.Key); latest >= 0 && offset < latest {
		return false
	}
	if r.Value == nil && h.HasDeleteHorizon() && f.nowMs >= h.BaseTimestamp {
		return false
	}
	return true
}

// rebuild writes a batch of the kept records (the second pass): same
// offsets (record offset deltas and the batch's last offset delta are
// kept), same codec, and record timestamps unchanged (their deltas are
// re-based on the new base timestamp, which is the delete horizon when the
// batch carries one). Headers are copied as encoded.
func (f *batchFilter) rebuild(dst []byte, set *records.RecordSet, k keptRecords, setHorizon bool) ([]byte, error) {
	h := set.Header()
	attrs := uint16(h.Attributes)
	var baseTs int64
	switch {
	case setHorizon:
		attrs |= records.DeleteHorizonBit
		baseTs = f.nowMs + f.deleteRetentionMs
	case h.HasDeleteHorizon():
		baseTs = h.BaseTimestamp
	default:
		baseTs = h.BaseTimestamp + k.firstTimestampDelta
	}
	maxTs := int64(-1)
	// The kept records are no larger than the batch's (a re-based delta
	// grows by a few bytes at most): one allocation, not a doubling series.
	f.recBuf = slices.Grow(f.recBuf[:0], set.Size()+64)
	err := set.Each(func(r records.Record) error {
		if !f.retain(h, r) {
			return nil
		}
		ts := h.BaseTimestamp + r.TimestampDelta
		maxTs = max(maxTs, ts)
		f.recBuf = appendRecord(f.recBuf, r, ts-baseTs)
		return nil
	})
	if err != nil {
		return dst, err
	}
	if h.IsLogAppendTime() {
		maxTs = h.MaxTimestamp
	}
	start := len(dst)
	dst = append(dst, make([]byte, records.HeaderSize)...)
	dst, err = f.comp.compress(dst, h.Compression(), f.recBuf)
	if cap(f.recBuf) > maxKeptScratch {
		f.recBuf = nil
	}
	if err != nil {
		return dst[:start], err
	}
	b := dst[start:]
	putHeader(b, h, attrs, baseTs, maxTs, k.count)
	return dst, nil
}

// appendEmptyBatch appends the header-only batch Kafka keeps for a
// producer's last batch once all its records are gone.
func appendEmptyBatch(dst []byte, h records.Header) []byte {
	start := len(dst)
	dst = append(dst, make([]byte, records.HeaderSize)...)
	attrs := uint16(h.Attributes) & (records.TimestampTypeBit | records.TransactionalBit | records.ControlBit)
	putHeader(dst[start:], h, attrs, h.MaxTimestamp, h.MaxTimestamp, 0)
	return dst
}

// putHeader fills the header of batch b (records already after it) from
// the original header h and the new fields, and sets the CRC.
func putHeader(b []byte, h records.Header, attrs uint16, baseTs, maxTs int64, count int32) {
	be := binary.BigEndian
	be.PutUint64(b[records.OffsetBaseOffset:], uint64(h.BaseOffset))
	be.PutUint32(b[records.OffsetBatchLength:], uint32(len(b)-records.LogOverhead))
	be.PutUint32(b[records.OffsetPartitionLeaderEpoch:], uint32(h.PartitionLeaderEpoch))
	b[records.OffsetMagic] = records.CurrentMagic
	be.PutUint16(b[records.OffsetAttributes:], attrs)
	be.PutUint32(b[records.OffsetLastOffsetDelta:], uint32(h.LastOffsetDelta))
	be.PutUint64(b[records.OffsetBaseTimestamp:], uint64(baseTs))
	be.PutUint64(b[records.OffsetMaxTimestamp:], uint64(maxTs))
	be.PutUint64(b[records.OffsetProducerID:], uint64(h.ProducerID))
	be.PutUint16(b[records.OffsetProducerEpoch:], uint16(h.ProducerEpoch))
	be.PutUint32(b[records.OffsetBaseSequence:], uint32(h.BaseSequence))
	be.PutUint32(b[records.OffsetRecordCount:], uint32(count))
	records.UpdateCRC(b)
}

// appendRecord encodes a record of a v2 batch: length, attributes,
// timestamp delta, offset delta, key, value, headers (zig-zag varints; the
// headers copied as encoded).
func appendRecord(dst []byte, r records.Record, tsDelta int64) []byte {
	headers := r.RawHeaders()
	size := 1 + varintLen(tsDelta) + varintLen(int64(r.OffsetDelta)) + bytesFieldLen(r.Key) + bytesFieldLen(r.Value) + len(headers)
	dst = binary.AppendVarint(dst, int64(size))
	dst = append(dst, byte(r.Attributes))
	dst = binary.AppendVarint(dst, tsDelta)
	dst = binary.AppendVarint(dst, int64(r.OffsetDelta))
	dst = appendBytesField(dst, r.Key)
	dst = appendBytesField(dst, r.Value)
	return append(dst, headers...)
}

func varintLen(v int64) int {
	var tmp [binary.MaxVarintLen64]byte
	return binary.PutVarint(tmp[:], v)
}

func bytesFieldLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int64(len(b))) + len(b)
}

func appendBytesField(dst, b []byte) []byte {
	if b == nil {
		return binary.AppendVarint(dst, -1)
	}
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
