package producerstate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sort"
)

// Snapshot file layout, Kafka's PID_SNAPSHOT_MAP_SCHEMA (big endian):
//
//	version int16 (= 1)
//	crc     uint32: CRC-32C of every byte after this field
//	entries int32 count, then per producer:
//	  producer_id int64, epoch int16, last_sequence int32, last_offset int64,
//	  offset_delta int32, timestamp int64, coordinator_epoch int32,
//	  current_txn_first_offset int64
//
// Only a producer's last batch is stored (last_offset -1 when it has none),
// so after a restart duplicates are detected against that batch alone, as in
// Kafka.
const (
	SnapshotVersion   int16 = 1
	snapshotCRCAt           = 2
	snapshotEntryAt         = 6
	snapshotHeadSize        = 10 // version, crc, entry count
	snapshotEntrySize       = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptSnapshot is returned for snapshot bytes that fail validation.
var ErrCorruptSnapshot = errors.New("producer state: corrupt snapshot")

// EncodeSnapshot serialises entries in Kafka's snapshot format, sorted by
// producer id so equal states give equal bytes.
func EncodeSnapshot(entries []*Entry) []byte {
	sorted := append([]*Entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ProducerID < sorted[j].ProducerID })
	buf := make([]byte, snapshotHeadSize+len(sorted)*snapshotEntrySize)
	be := binary.BigEndian
	be.PutUint16(buf[0:], uint16(SnapshotVersion))
	be.PutUint32(buf[snapshotEntryAt:], uint32(len(sorted)))
	p := snapshotHeadSize
	for _, e := range sorted {
		be.PutUint64(buf[p:], uint64(e.ProducerID))
		be.PutUint16(buf[p+8:], uint16(e.ProducerEpoch))
		be.PutUint32(buf[p+10:], uint32(e.LastSeq()))
		be.PutUint64(buf[p+14:], uint64(e.LastDataOffset()))
		be.PutUint32(buf[p+22:], uint32(e.LastOffsetDelta()))
		be.PutUint64(buf[p+26:], uint64(e.LastTimestamp))
		be.PutUint32(buf[p+34:], uint32(e.CoordinatorEpoch))
		be.PutUint64(buf[p+38:], uint64(e.CurrentTxnFirstOffset))
		p += snapshotEntrySize
	}
	be.PutUint32(buf[snapshotCRCAt:], crc32.Checksum(buf[snapshotEntryAt:], castagnoli))
	return buf
}

// DecodeSnapshot parses snapshot bytes. Any defect (short, unknown version,
// CRC mismatch, bad count, trailing bytes) is ErrCorruptSnapshot. A negative
// current_txn_first_offset means no open transaction, as in Kafka.
func DecodeSnapshot(b []byte) ([]*Entry, error) {
	if len(b) < snapshotHeadSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the header", ErrCorruptSnapshot, len(b))
	}
	be := binary.BigEndian
	if v := int16(be.Uint16(b)); v != SnapshotVersion {
		return nil, fmt.Errorf("%w: unknown version %d", ErrCorruptSnapshot, v)
	}
	stored, computed := be.Uint32(b[snapshotCRCAt:]), crc32.Checksum(b[snapshotEntryAt:], castagnoli)
	if stored != computed {
		return nil, fmt.Errorf("%w: stored crc %08x, computed %08x", ErrCorruptSnapshot, stored, computed)
	}
	count := int32(be.Uint32(b[snapshotEntryAt:]))
	body := b[snapshotHeadSize:]
	if count < 0 || int64(count)*snapshotEntrySize != int64(len(body)) {
		return nil, fmt.Errorf("%w: %d entries do not fit %d bytes", ErrCorruptSnapshot, count, len(body))
	}
	entries := make([]*Entry, 0, count)
	for p := 0; p < len(body); p += snapshotEntrySize {
		r := body[p : p+snapshotEntrySize]
		e := &Entry{
			ProducerID:            int64(be.Uint64(r)),
			ProducerEpoch:         int16(be.Uint16(r[8:])),
			LastTimestamp:         int64(be.Uint64(r[26:])),
			CoordinatorEpoch:      int32(be.Uint32(r[34:])),
			CurrentTxnFirstOffset: int64(be.Uint64(r[38:])),
		}
		if e.CurrentTxnFirstOffset < 0 {
			e.CurrentTxnFirstOffset = -1
		}
		if lastOffset := int64(be.Uint64(r[14:])); lastOffset >= 0 {
			e.batches = []BatchMetadata{{
				LastSeq:     int32(be.Uint32(r[10:])),
				LastOffset:  lastOffset,
				OffsetDelta: int32(be.Uint32(r[22:])),
				Timestamp:   e.LastTimestamp,
			}}
		}
		entries = append(entries, e)
	}
	return entries, nil
}
