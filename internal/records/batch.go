// Package records reads, validates and rewrites Kafka record batches (magic 2)
// in the byte layout Kafka stores on disk and sends on the wire.
//
// Layout of a batch (big endian):
//
//	0  baseOffset int64          8  batchLength int32 (bytes after this field)
//	12 partitionLeaderEpoch int32
//	16 magic int8                17 crc uint32 (CRC-32C of bytes 21..end)
//	21 attributes int16          23 lastOffsetDelta int32
//	27 baseTimestamp int64       35 maxTimestamp int64
//	43 producerId int64          51 producerEpoch int16
//	53 baseSequence int32        57 recordCount int32
//	61 records...
//
// Limits, the same for Validate (Produce) and every reader (Decoder), so a
// batch Produce accepts can always be read back:
//   - a batch's records decompress to at most the per-batch cap
//     (DefaultMaxUncompressedBytes, 256 MiB), else CORRUPT_MESSAGE; the
//     decompressed bytes of all decoders sharing a Budget (the broker's
//     sluice.decompression.max.inflight.bytes) stay within it;
//   - counts are checked against the bytes before anything is walked or
//     kept: the record count against the cap and the records' bytes (a
//     record takes at least 7 bytes), a header count against the bytes
//     left in its record (a header takes at least 2), lengths of keys,
//     values and header fields against their record;
//   - a record may carry any number of headers, as Kafka's DefaultRecord
//     allows (its readFrom refuses only a count above the bytes left, and
//     its validator skips headers without keeping them): headers are
//     checked but never decoded into a list, so a record of 32 million
//     empty headers costs its 64 MB of bytes on every path, no more.
package records

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Offsets of the fields of a batch header.
const (
	OffsetBaseOffset           = 0
	OffsetBatchLength          = 8
	OffsetPartitionLeaderEpoch = 12
	OffsetMagic                = 16
	OffsetCRC                  = 17
	OffsetAttributes           = 21
	OffsetLastOffsetDelta      = 23
	OffsetBaseTimestamp        = 27
	OffsetMaxTimestamp         = 35
	OffsetProducerID           = 43
	OffsetProducerEpoch        = 51
	OffsetBaseSequence         = 53
	OffsetRecordCount          = 57

	// HeaderSize is the size of a batch header; records follow it.
	HeaderSize = 61
	// LogOverhead is the part of a batch outside batchLength: baseOffset and batchLength.
	LogOverhead = 12
	// CurrentMagic is the only batch format Sluice stores.
	CurrentMagic = 2
)

// Attribute bits.
const (
	CompressionMask     = 0x07
	TimestampTypeBit    = 0x08 // set: LogAppendTime
	TransactionalBit    = 0x10
	ControlBit          = 0x20
	DeleteHorizonBit    = 0x40 // KIP-534: baseTimestamp is the delete horizon
	NoCompression       = 0
	GzipCompression     = 1
	SnappyCompression   = 2
	LZ4Compression      = 3
	ZstdCompression     = 4
	maxKnownCompression = ZstdCompression
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of batch parsing. Callers map them onto Kafka error codes.
var (
	ErrShortBatch   = errors.New("records: batch shorter than its header")
	ErrBadMagic     = errors.New("records: unsupported magic")
	ErrBadLength    = errors.New("records: batch length out of range")
	ErrCRC          = errors.New("records: CRC mismatch")
	ErrCorruptBatch = errors.New("records: corrupt batch")
)

// Header is a decoded batch header.
type Header struct {
	BaseOffset           int64
	BatchLength          int32
	PartitionLeaderEpoch int32
	Magic                int8
	CRC                  uint32
	Attributes           int16
	LastOffsetDelta      int32
	BaseTimestamp        int64
	MaxTimestamp         int64
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	RecordCount          int32
}

// ParseHeader decodes the header at the start of b. It checks the magic and
// that the header fits, not the CRC or the records (see Validate).
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, ErrShortBatch
	}
	be := binary.BigEndian
	h := Header{
		BaseOffset:           int64(be.Uint64(b[OffsetBaseOffset:])),
		BatchLength:          int32(be.Uint32(b[OffsetBatchLength:])),
		PartitionLeaderEpoch: int32(be.Uint32(b[OffsetPartitionLeaderEpoch:])),
		Magic:                int8(b[OffsetMagic]),
		CRC:                  be.Uint32(b[OffsetCRC:]),
		Attributes:           int16(be.Uint16(b[OffsetAttributes:])),
		LastOffsetDelta:      int32(be.Uint32(b[OffsetLastOffsetDelta:])),
		BaseTimestamp:        int64(be.Uint64(b[OffsetBaseTimestamp:])),
		MaxTimestamp:         int64(be.Uint64(b[OffsetMaxTimestamp:])),
		ProducerID:           int64(be.Uint64(b[OffsetProducerID:])),
		ProducerEpoch:        int16(be.Uint16(b[OffsetProducerEpoch:])),
		BaseSequence:         int32(be.Uint32(b[OffsetBaseSequence:])),
		RecordCount:          int32(be.Uint32(b[OffsetRecordCount:])),
	}
	if h.Magic != CurrentMagic {
		return h, fmt.Errorf("%w: %d", ErrBadMagic, h.Magic)
	}
	if h.BatchLength < HeaderSize-LogOverhead {
		return h, fmt.Errorf("%w: %d", ErrBadLength, h.BatchLength)
	}
	return h, nil
}

// Size is the whole batch's size in bytes.
func (h Header) Size() int64 { return int64(h.BatchLength) + LogOverhead }

// LastOffset is the offset of the batch's last record.
func (h Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset after the batch.
func (h Header) NextOffset() int64 { return h.LastOffset() + 1 }

// Compression is the batch's codec (0 none .. 4 zstd).
func (h Header) Compression() int { return int(h.Attributes & CompressionMask) }

// IsTransactional reports whether the batch belongs to a transaction.
func (h Header) IsTransactional() bool { return h.Attributes&TransactionalBit != 0 }

// IsControl reports whether the batch holds control records (transaction markers).
func (h Header) IsControl() bool { return h.Attributes&ControlBit != 0 }

// IsLogAppendTime reports whether the batch's timestamps are the broker's append time.
func (h Header) IsLogAppendTime() bool { return h.Attributes&TimestampTypeBit != 0 }

// HasDeleteHorizon reports whether baseTimestamp carries the KIP-534 delete horizon.
func (h Header) HasDeleteHorizon() bool { return h.Attributes&DeleteHorizonBit != 0 }

// HasProducerID reports whether the batch was written by an idempotent producer.
func (h Header) HasProducerID() bool { return h.ProducerID >= 0 }

// LastSequence is the sequence of the batch's last record, wrapping as Kafka does.
func (h Header) LastSequence() int32 {
	if h.BaseSequence < 0 {
		return -1
	}
	s := int64(h.BaseSequence) + int64(h.LastOffsetDelta)
	if s > int64(^uint32(0)>>1) {
		s -= int64(^uint32(0)>>1) + 1
	}
	return int32(s)
}

// ComputeCRC returns the CRC-32C of a batch: bytes from attributes to the end.
func ComputeCRC(batch []byte) uint32 { return crc32.Checksum(batch[OffsetAttributes:], castagnoli) }

// CheckCRC verifies the stored CRC of a whole batch.
func CheckCRC(batch []byte) error {
	if len(batch) < HeaderSize {
		return ErrShortBatch
	}
	if got, want := ComputeCRC(batch), binary.BigEndian.Uint32(batch[OffsetCRC:]); got != want {
		return fmt.Errorf("%w: computed %08x, stored %08x", ErrCRC, got, want)
	}
	return nil
}

// SetBaseOffset rewrites the base offset (outside the CRC).
func SetBaseOffset(batch []byte, off int64) {
	binary.BigEndian.PutUint64(batch[OffsetBaseOffset:], uint64(off))
}

// SetPartitionLeaderEpoch rewrites the partition leader epoch (outside the CRC).
func SetPartitionLeaderEpoch(batch []byte, epoch int32) {
	binary.BigEndian.PutUint32(batch[OffsetPartitionLeaderEpoch:], uint32(epoch))
}

// UpdateCRC recomputes and stores the CRC after a change inside the CRC's range.
func UpdateCRC(batch []byte) {
	binary.BigEndian.PutUint32(batch[OffsetCRC:], ComputeCRC(batch))
}

// Batches splits a buffer of concatenated batches, calling fn for each whole
// batch (header decoded, bytes aliased into buf). A trailing partial batch is
// not an error: it is where the next read resumes; rest returns its offset.
func Batches(buf []byte, fn func(h Header, batch []byte) error) (rest int, err error) {
	pos := 0
	for len(buf)-pos >= HeaderSize {
		h, err := ParseHeader(buf[pos:])
		if err != nil {
			return pos, err
		}
		size := int(h.Size())
		if len(buf)-pos < size {
			break
		}
		if err := fn(h, buf[pos:pos+size]); err != nil {
			return pos, err
		}
		pos += size
	}
	return pos, nil
}
