package recordstest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/pierrec/lz4/v4"

	"github.com/sluice-io/sluice/internal/records"
)

// Hostile batches: valid frames (CRC, offsets, counts) around records that
// cost far more to decode than to send.

// HeaderBomb returns a batch of one record (key "bomb", value "v", at ts)
// carrying n empty headers (empty key, null value: two bytes each), with
// codec. Compressed by records' own encoder (zstd declares the content
// size), 32 million headers take about 6 KB with zstd. Kafka's validator
// skips over headers without keeping them, so it accepts such a batch.
func HeaderBomb(n int, codec int, ts int64) ([]byte, error) {
	var body []byte
	body = append(body, 0)                   // attributes
	body = binary.AppendVarint(body, 0)      // timestamp delta
	body = binary.AppendVarint(body, 0)      // offset delta
	body = appendBytes(body, []byte("bomb")) // key
	body = appendBytes(body, []byte("v"))    // value
	body = binary.AppendVarint(body, int64(n))
	rec := binary.AppendVarint(nil, int64(len(body)+2*n))
	rec = append(rec, body...)
	rec = append(rec, bytes.Repeat([]byte{0, 1}, n)...) // key length 0, value null
	return records.BuildEncoded(Options(Compression(codec)), 1, ts, ts, rec)
}

// DecompressionBomb returns a batch of one claimed record whose records
// section is about size bytes of codec expanding as far as the codec
// allows (zeros): gzip about 1,000-fold, lz4 about 250-fold, zstd (RLE
// blocks, without a declared content size, as a stream) 32,000-fold,
// snappy about 20-fold. None holds a valid record.
func DecompressionBomb(codec, size int, ts int64) ([]byte, error) {
	return bomb(codec, size, ts, nil)
}

// FramedDecompressionBomb is DecompressionBomb whose zeros follow the
// start of a record claiming them all as its value (length 1 GiB): the
// first bytes frame, so only the decompressed size refuses it (gzip, zstd),
// or, under the cap (lz4), the record's end.
func FramedDecompressionBomb(codec, size int, ts int64) ([]byte, error) {
	prefix := binary.AppendVarint(nil, 1<<30) // record length
	prefix = append(prefix, 0, 0, 0, 1)       // attributes, timestamp and offset deltas, null key
	prefix = binary.AppendVarint(prefix, 1<<30-16)
	return bomb(codec, size, ts, prefix)
}

func bomb(codec, size int, ts int64, prefix []byte) ([]byte, error) {
	var body []byte
	var err error
	switch codec {
	case records.GzipCompression:
		body, err = streamBomb(size, prefix, func(w io.Writer) (io.WriteCloser, error) {
			return gzip.NewWriterLevel(w, 5) // as small as level 9 on zeros, ten times faster
		})
	case records.LZ4Compression:
		body, err = streamBomb(size, prefix, func(w io.Writer) (io.WriteCloser, error) {
			zw := lz4.NewWriter(w)
			return zw, zw.Apply(lz4.BlockSizeOption(lz4.Block4Mb), lz4.CompressionLevelOption(lz4.Level9))
		})
	case records.ZstdCompression:
		body = zstdRLEBomb(size, prefix)
	case records.SnappyCompression:
		body = s2.EncodeSnappy(nil, append(prefix, make([]byte, size*20)...))
	default:
		return nil, fmt.Errorf("no decompression bomb for codec %d", codec)
	}
	if err != nil {
		return nil, err
	}
	return Assemble(Options(Compression(codec)), 1, ts, ts, body), nil
}

// streamBomb writes prefix then zeros through a compressor until about
// size bytes came out.
func streamBomb(size int, prefix []byte, open func(io.Writer) (io.WriteCloser, error)) ([]byte, error) {
	var out bytes.Buffer
	w, err := open(&out)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(prefix); err != nil {
		return nil, err
	}
	zeros := make([]byte, 1<<20)
	for out.Len() < size {
		if _, err := w.Write(zeros); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// zstdRLEBomb is one zstd frame of about size bytes without a content
// size: a 128 KiB window, prefix in a raw block, then RLE blocks of 128 KiB
// of zeros, four bytes each.
func zstdRLEBomb(size int, prefix []byte) []byte {
	const block = 128 << 10
	out := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	out = append(out, 0x00, 7<<3) // no content size, not single segment; window 2^(10+7)
	if len(prefix) > 0 {
		h := uint32(len(prefix)) << 3 // type raw
		out = append(append(out, byte(h), byte(h>>8), byte(h>>16)), prefix...)
	}
	for len(out)+8 <= size {
		out = appendRLEBlock(out, block, false)
	}
	return appendRLEBlock(out, block, true)
}

func appendRLEBlock(out []byte, n int, last bool) []byte {
	h := uint32(n)<<3 | 1<<1 // type RLE
	if last {
		h |= 1
	}
	return append(out, byte(h), byte(h>>8), byte(h>>16), 0)
}

// Assemble frames body, the records section as stored (compressed with
// opts' codec, not checked), as a batch of count records with its CRC set.
func Assemble(opts records.BuilderOptions, count int32, baseTs, maxTs int64, body []byte) []byte {
	out := make([]byte, records.HeaderSize, records.HeaderSize+len(body))
	out = append(out, body...)
	be := binary.BigEndian
	be.PutUint64(out[records.OffsetBaseOffset:], uint64(opts.BaseOffset))
	be.PutUint32(out[records.OffsetBatchLength:], uint32(len(out)-records.LogOverhead))
	be.PutUint32(out[records.OffsetPartitionLeaderEpoch:], uint32(opts.PartitionLeaderEpoch))
	out[records.OffsetMagic] = records.CurrentMagic
	be.PutUint16(out[records.OffsetAttributes:], uint16(opts.Compression))
	be.PutUint32(out[records.OffsetLastOffsetDelta:], uint32(count-1))
	be.PutUint64(out[records.OffsetBaseTimestamp:], uint64(baseTs))
	be.PutUint64(out[records.OffsetMaxTimestamp:], uint64(maxTs))
	be.PutUint64(out[records.OffsetProducerID:], uint64(opts.ProducerID))
	be.PutUint16(out[records.OffsetProducerEpoch:], uint16(opts.ProducerEpoch))
	be.PutUint32(out[records.OffsetBaseSequence:], uint32(opts.BaseSequence))
	be.PutUint32(out[records.OffsetRecordCount:], uint32(count))
	records.UpdateCRC(out)
	return out
}

func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendVarint(dst, int64(len(b)))
	return append(dst, b...)
}
