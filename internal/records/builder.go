package records

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// BuilderOptions describe the batch a Builder makes.
type BuilderOptions struct {
	// Compression is the codec id (NoCompression .. ZstdCompression).
	Compression          int
	BaseOffset           int64
	PartitionLeaderEpoch int32
	// ProducerID is -1 for a non-idempotent batch (then epoch and sequence
	// should be -1 too).
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Transactional bool
	Control       bool
	// LogAppendTimeMs, when >= 0, makes a LogAppendTime batch whose
	// maxTimestamp is this value.
	LogAppendTimeMs int64
}

// NonIdempotent returns options for a plain batch: no producer id and
// CreateTime timestamps.
func NonIdempotent(codec int) BuilderOptions {
	return BuilderOptions{Compression: codec, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, LogAppendTimeMs: -1}
}

// Builder makes one valid v2 batch from records appended in order. It is
// for broker-internal writes (coordinators, markers) and tests.
type Builder struct {
	opts    BuilderOptions
	records []byte
	count   int32
	baseTs  int64
	maxTs   int64
}

// NewBuilder starts an empty batch.
func NewBuilder(opts BuilderOptions) *Builder {
	return &Builder{opts: opts, maxTs: -1}
}

// Add appends a record with an absolute timestamp; nil key or value is null.
func (b *Builder) Add(timestamp int64, key, value []byte, headers []RecordHeader) {
	if b.count == 0 {
		b.baseTs = timestamp
	}
	if timestamp > b.maxTs {
		b.maxTs = timestamp
	}
	b.records = appendRecord(b.records, 0, timestamp-b.baseTs, b.count, key, value, headers)
	b.count++
}

// Count is the number of records added so far.
func (b *Builder) Count() int32 { return b.count }

// Build encodes the batch (compressing the records) with its CRC set.
// The Builder may keep being used: Build does not reset it.
func (b *Builder) Build() ([]byte, error) {
	if b.count == 0 {
		return nil, errors.New("records: cannot build an empty batch")
	}
	return BuildEncoded(b.opts, b.count, b.baseTs, b.maxTs, b.records)
}

// BuildEncoded makes a batch of count records given encoded (the records
// section, uncompressed), compressing it with opts.Compression and setting
// the CRC. Nothing checks the records: it is for tests and tools that need
// records the Builder cannot make (millions of headers, broken framing).
func BuildEncoded(opts BuilderOptions, count int32, baseTs, maxTs int64, encoded []byte) ([]byte, error) {
	o := opts
	if o.Compression < NoCompression || o.Compression > maxKnownCompression {
		return nil, fmt.Errorf("%w: %d", ErrUnknownCompression, o.Compression)
	}
	attrs := uint16(o.Compression)
	if o.Transactional {
		attrs |= TransactionalBit
	}
	if o.Control {
		attrs |= ControlBit
	}
	if o.LogAppendTimeMs >= 0 {
		attrs |= TimestampTypeBit
		maxTs = o.LogAppendTimeMs
	}
	out := make([]byte, HeaderSize, HeaderSize+len(encoded))
	out, err := compress(out, o.Compression, encoded)
	if err != nil {
		return nil, err
	}
	be := binary.BigEndian
	be.PutUint64(out[OffsetBaseOffset:], uint64(o.BaseOffset))
	be.PutUint32(out[OffsetBatchLength:], uint32(len(out)-LogOverhead))
	be.PutUint32(out[OffsetPartitionLeaderEpoch:], uint32(o.PartitionLeaderEpoch))
	out[OffsetMagic] = CurrentMagic
	be.PutUint16(out[OffsetAttributes:], attrs)
	be.PutUint32(out[OffsetLastOffsetDelta:], uint32(count-1))
	be.PutUint64(out[OffsetBaseTimestamp:], uint64(baseTs))
	be.PutUint64(out[OffsetMaxTimestamp:], uint64(maxTs))
	be.PutUint64(out[OffsetProducerID:], uint64(o.ProducerID))
	be.PutUint16(out[OffsetProducerEpoch:], uint16(o.ProducerEpoch))
	be.PutUint32(out[OffsetBaseSequence:], uint32(o.BaseSequence))
	be.PutUint32(out[OffsetRecordCount:], uint32(count))
	UpdateCRC(out)
	return out, nil
}

// BuildEndTxnMarker makes the control batch that commits or aborts a
// producer's transaction: one control record, uncompressed, as Kafka's
// coordinator writes it.
func BuildEndTxnMarker(opts BuilderOptions, commit bool, coordinatorEpoch int32, timestamp int64) ([]byte, error) {
	opts.Control, opts.Transactional, opts.Compression = true, true, NoCompression
	typ := ControlAbort
	if commit {
		typ = ControlCommit
	}
	b := NewBuilder(opts)
	b.Add(timestamp, ControlKey{Type: typ}.AppendTo(nil), EndTxnMarker{CoordinatorEpoch: coordinatorEpoch}.AppendTo(nil), nil)
	return b.Build()
}
