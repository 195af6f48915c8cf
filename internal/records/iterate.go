package records

import (
	"context"
	"encoding/binary"
	"fmt"
)

// Decoder reads the records of stored or produced batches within bounded
// memory: one batch's records never decompress past the per-batch cap, and
// the decompressed bytes of every decoder sharing the Budget stay within
// it. Validate and every read path (timestamp lookups, the cleaner) use the
// same decoder, hence the same limits, so a batch Produce accepts can be
// read again. A nil *Decoder has the default cap and no budget.
type Decoder struct {
	budget        *Budget
	maxBatchBytes int
}

// NewDecoder returns a decoder over budget (nil: none) with a per-batch cap
// of maxBatchBytes decompressed bytes (0: DefaultMaxUncompressedBytes).
func NewDecoder(budget *Budget, maxBatchBytes int) *Decoder {
	return &Decoder{budget: budget, maxBatchBytes: maxBatchBytes}
}

// Budget returns the decoder's budget; nil for none.
func (d *Decoder) Budget() *Budget {
	if d == nil {
		return nil
	}
	return d.budget
}

// MaxBatchBytes is the per-batch cap on decompressed records.
func (d *Decoder) MaxBatchBytes() int {
	if d == nil || d.maxBatchBytes <= 0 {
		return DefaultMaxUncompressedBytes
	}
	return d.maxBatchBytes
}

// RecordSet is the records of one batch, decompressed. It is valid only
// inside the callback of Decoder.Records.
type RecordSet struct {
	h    Header
	data []byte
}

// Header is the batch's header.
func (s *RecordSet) Header() Header { return s.h }

// Size is the records' decompressed size in bytes.
func (s *RecordSet) Size() int { return len(s.data) }

// Each decodes the records in order and calls fn with each; it may be
// called more than once (a rewriter decides on a first pass and writes on a
// second). Slices in a Record alias the set's storage.
func (s *RecordSet) Each(fn func(Record) error) error {
	return walkRecords(s.data, s.h.RecordCount, func(_ int32, r *Record) error { return fn(*r) })
}

// Records decodes one whole batch (decompressing as needed, waiting for
// budget until ctx ends) and calls fn with its records. It checks framing,
// the record count and the cap, not the CRC (CheckCRC) nor the client rules
// (Validate). The set and every slice of its records are valid only until
// fn returns: the storage is pooled and its budget released then. fn must
// not decode another batch with a decoder of the same budget: it would wait
// for budget while holding some.
func (d *Decoder) Records(ctx context.Context, batch []byte, fn func(*RecordSet) error) error {
	set, out, err := d.open(ctx, batch, true, nil)
	if err != nil {
		return err
	}
	defer out.release()
	return fn(&set)
}

// ForEachRecord is Records calling fn for each record.
func (d *Decoder) ForEachRecord(ctx context.Context, batch []byte, fn func(Record) error) error {
	return d.Records(ctx, batch, func(s *RecordSet) error { return s.Each(fn) })
}

// open checks the batch's frame and decompresses its records. Records too
// large for a first buffer have their first bytes walked before more
// memory is spent, with fn (nil: framing only), so that a bomb of garbage
// costs one small buffer.
func (d *Decoder) open(ctx context.Context, batch []byte, pooled bool, fn func(i int32, r *Record) error) (RecordSet, decompressed, error) {
	h, err := wholeBatch(batch)
	if err != nil {
		return RecordSet{}, decompressed{}, err
	}
	if h.RecordCount < 0 {
		return RecordSet{}, decompressed{}, fmt.Errorf("%w: negative record count %d", ErrInvalidRecord, h.RecordCount)
	}
	limit := d.MaxBatchBytes()
	if int64(h.RecordCount)*minRecordSize > int64(limit) {
		return RecordSet{}, decompressed{}, fmt.Errorf("%w: %d records cannot fit in the %d bytes a batch may hold", ErrInvalidRecord, h.RecordCount, limit)
	}
	body := batch[HeaderSize:]
	codec := h.Compression()
	if codec == NoCompression {
		return RecordSet{h: h, data: body}, decompressed{}, nil
	}
	if codec > maxKnownCompression {
		return RecordSet{}, decompressed{}, fmt.Errorf("%w: %d", ErrUnknownCompression, codec)
	}
	if fn == nil {
		fn = func(int32, *Record) error { return nil }
	}
	check := func(prefix []byte) (int64, error) { return walkPrefix(prefix, h.RecordCount, fn) }
	out, err := decompressRecords(ctx, d.Budget(), codec, body, limit, pooled, check)
	if err != nil {
		return RecordSet{}, decompressed{}, err
	}
	return RecordSet{h: h, data: out.data}, out, nil
}

// wholeBatch checks that batch is exactly one batch and returns its header.
func wholeBatch(batch []byte) (Header, error) {
	h, err := ParseHeader(batch)
	if err != nil {
		return h, err
	}
	if h.Size() != int64(len(batch)) {
		return h, fmt.Errorf("%w: header says %d bytes, have %d", ErrBadLength, h.Size(), len(batch))
	}
	return h, nil
}

// ForEachRecord decodes every record of one whole batch (decompressing as
// needed, within the default per-batch cap and no budget) and calls fn with
// each. It checks record framing and the record count, not the CRC
// (CheckCRC) nor the client rules (Validate). Slices in a Record stay valid
// after fn returns (they alias batch or fresh storage), so callers may keep
// them. Paths that serve clients use a Decoder with the broker's budget.
func ForEachRecord(batch []byte, fn func(Record) error) error {
	var d *Decoder
	set, _, err := d.open(context.Background(), batch, false, nil)
	if err != nil {
		return err
	}
	return set.Each(fn)
}

// Control record types (the control record key's type field).
const (
	ControlAbort          int16 = 0
	ControlCommit         int16 = 1
	ControlLeaderChange   int16 = 2
	ControlSnapshotHeader int16 = 3
	ControlSnapshotFooter int16 = 4
	ControlKRaftVersion   int16 = 5
	ControlKRaftVoters    int16 = 6
)

// ControlKey is the key of a control record.
type ControlKey struct {
	Version int16
	Type    int16
}

// controlKeySize is version int16 + type int16.
const controlKeySize = 4

// ParseControlKey decodes a control record key. Later versions may append
// fields; like Kafka we read the two we know.
func ParseControlKey(key []byte) (ControlKey, error) {
	if len(key) < controlKeySize {
		return ControlKey{}, fmt.Errorf("%w: control record key of %d bytes", ErrInvalidRecord, len(key))
	}
	k := ControlKey{
		Version: int16(binary.BigEndian.Uint16(key)),
		Type:    int16(binary.BigEndian.Uint16(key[2:])),
	}
	if k.Version < 0 {
		return k, fmt.Errorf("%w: control record key version %d", ErrInvalidRecord, k.Version)
	}
	return k, nil
}

// AppendTo appends the encoded key to dst.
func (k ControlKey) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(k.Version))
	return binary.BigEndian.AppendUint16(dst, uint16(k.Type))
}

// EndTxnMarker is the value of an abort or commit control record.
type EndTxnMarker struct {
	Version          int16
	CoordinatorEpoch int32
}

// endTxnMarkerSize is version int16 + coordinatorEpoch int32.
const endTxnMarkerSize = 6

// ParseEndTxnMarker decodes the value of an abort/commit control record.
func ParseEndTxnMarker(value []byte) (EndTxnMarker, error) {
	if len(value) < endTxnMarkerSize {
		return EndTxnMarker{}, fmt.Errorf("%w: end transaction marker of %d bytes", ErrInvalidRecord, len(value))
	}
	m := EndTxnMarker{
		Version:          int16(binary.BigEndian.Uint16(value)),
		CoordinatorEpoch: int32(binary.BigEndian.Uint32(value[2:])),
	}
	if m.Version < 0 {
		return m, fmt.Errorf("%w: end transaction marker version %d", ErrInvalidRecord, m.Version)
	}
	return m, nil
}

// AppendTo appends the encoded marker to dst.
func (m EndTxnMarker) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(m.Version))
	return binary.BigEndian.AppendUint32(dst, uint32(m.CoordinatorEpoch))
}
