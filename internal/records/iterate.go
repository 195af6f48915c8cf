package records

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// batchRecords returns the records section of a whole batch, decompressed
// when the batch is compressed. When buf is non-nil, decompressed bytes are
// written into it (the caller owns and may pool it); otherwise a fresh slice
// is returned that the caller may keep.
func batchRecords(batch []byte, h Header, buf *bytes.Buffer, limit int) ([]byte, error) {
	body := batch[HeaderSize:]
	codec := h.Compression()
	if codec == NoCompression {
		return body, nil
	}
	if codec > maxKnownCompression {
		return nil, fmt.Errorf("%w: %d", ErrUnknownCompression, codec)
	}
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if err := decompress(buf, codec, body, limit); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
// needed) and calls fn with each. It checks record framing and the record
// count, not the CRC (CheckCRC) nor the client rules (Validate). Slices in a
// Record stay valid after fn returns (they alias batch or a fresh
// decompression buffer), so callers may keep them.
func ForEachRecord(batch []byte, fn func(Record) error) error {
	h, err := wholeBatch(batch)
	if err != nil {
		return err
	}
	if h.RecordCount < 0 {
		return fmt.Errorf("%w: negative record count %d", ErrInvalidRecord, h.RecordCount)
	}
	data, err := batchRecords(batch, h, nil, 0)
	if err != nil {
		return err
	}
	return walkRecords(data, h.RecordCount, true, func(_ int32, r *Record) error { return fn(*r) })
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
