package records

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// The read-path fuzz targets take [codec][record count, 4 bytes][records
// section as stored], framed as a batch with a valid CRC (fuzzBatch), so
// mutations reach the records instead of failing the CRC. Committed seeds
// include a header bomb of 32 million headers (6 KB of zstd, refused here
// on its declared 64 MB by the fuzzers' 4 MiB cap; test/hostile reads it
// whole) and one of a million, and decompression bombs of every codec.

// fuzzBatch frames data ([codec][count][records]) as a batch.
func fuzzBatch(data []byte) ([]byte, bool) {
	if len(data) < 5 {
		return nil, false
	}
	codec, count, body := int(data[0]%5), int32(binary.BigEndian.Uint32(data[1:5])), data[5:]
	b := make([]byte, HeaderSize, HeaderSize+len(body))
	b = append(b, body...)
	be := binary.BigEndian
	be.PutUint32(b[OffsetBatchLength:], uint32(len(b)-LogOverhead))
	b[OffsetMagic] = CurrentMagic
	be.PutUint16(b[OffsetAttributes:], uint16(codec))
	be.PutUint32(b[OffsetLastOffsetDelta:], uint32(count-1))
	be.PutUint64(b[OffsetBaseTimestamp:], uint64(testNow))
	be.PutUint64(b[OffsetMaxTimestamp:], uint64(testNow+1000))
	be.PutUint64(b[OffsetProducerID:], ^uint64(0))
	be.PutUint16(b[OffsetProducerEpoch:], ^uint16(0))
	be.PutUint32(b[OffsetBaseSequence:], ^uint32(0))
	be.PutUint32(b[OffsetRecordCount:], uint32(count))
	UpdateCRC(b)
	return b, true
}

// fuzzInput is the fuzz input that fuzzBatch frames as codec, count, body.
func fuzzInput(codec int, count int32, body []byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{byte(codec)}, uint32(count)), body...)
}

// FuzzRecordHeaders iterates records with headers through a budgeted
// decoder: every way to read a record's headers agrees with its count,
// a record rebuilt from its fields and raw headers decodes to the same
// record, the budget is returned, and the unbudgeted ForEachRecord agrees.
func FuzzRecordHeaders(f *testing.F) {
	var recs []byte
	recs = appendRecord(recs, 0, 0, 0, []byte("k"), []byte("v"), []RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "", Value: nil}})
	recs = appendRecord(recs, 0, 5, 1, nil, []byte("w"), nil)
	f.Add(fuzzInput(NoCompression, 2, recs))
	comp, err := compress(nil, ZstdCompression, recs)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(fuzzInput(ZstdCompression, 2, comp))
	f.Fuzz(func(t *testing.T, data []byte) {
		batch, ok := fuzzBatch(data)
		if !ok {
			return
		}
		budget := NewBudget(8 << 20)
		dec := NewDecoder(budget, 4<<20)
		var n int32
		err := dec.ForEachRecord(context.Background(), batch, func(r Record) error {
			n++
			checkHeaders(t, r)
			return nil
		})
		if now, _ := budget.InUse(); now != 0 {
			t.Fatalf("%d bytes of budget held after the walk", now)
		}
		if err != nil {
			return
		}
		var m int32
		if err := ForEachRecord(batch, func(Record) error { m++; return nil }); err != nil || m != n {
			t.Fatalf("ForEachRecord read %d records (%v), the decoder %d", m, err, n)
		}
	})
}

func checkHeaders(t *testing.T, r Record) {
	var seen int32
	if err := r.EachHeader(func(k, v []byte) error { seen++; return nil }); err != nil || seen != r.HeaderCount {
		t.Fatalf("EachHeader saw %d of %d headers: %v", seen, r.HeaderCount, err)
	}
	hs, err := r.Headers(16)
	if (err != nil) != (r.HeaderCount > 16) || (err == nil && len(hs) != int(r.HeaderCount)) {
		t.Fatalf("Headers(16) of %d headers: %d, %v", r.HeaderCount, len(hs), err)
	}
	raw := r.RawHeaders()
	if c, k := binary.Varint(raw); k <= 0 || c != int64(r.HeaderCount) {
		t.Fatalf("raw headers open with count %d, the record has %d", c, r.HeaderCount)
	}
	// The record rebuilt from its fields and raw headers reads the same.
	body := []byte{byte(r.Attributes)}
	body = binary.AppendVarint(body, r.TimestampDelta)
	body = binary.AppendVarint(body, int64(r.OffsetDelta))
	body = appendBytesField(body, r.Key)
	body = appendBytesField(body, r.Value)
	body = append(body, raw...)
	enc := append(binary.AppendVarint(nil, int64(len(body))), body...)
	err = walkRecords(enc, 1, func(_ int32, again *Record) error {
		if again.TimestampDelta != r.TimestampDelta || again.OffsetDelta != r.OffsetDelta || !bytes.Equal(again.Key, r.Key) ||
			!bytes.Equal(again.Value, r.Value) || again.HeaderCount != r.HeaderCount || !bytes.Equal(again.RawHeaders(), raw) {
			t.Fatalf("rebuilt record %+v differs from %+v", *again, r)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("rebuilt record does not decode: %v", err)
	}
}

// FuzzDecompress decompresses [codec][bytes] within a 1 MiB cap, pooled
// and fresh, against a budget: both agree, no output passes the cap, the
// budget is returned, and the result is the codec's own plain decode
// (gzip, lz4, zstd) whenever either succeeds within the cap.
func FuzzDecompress(f *testing.F) {
	raw := bytes.Repeat([]byte("sluice records "), 2000)
	for _, codec := range []int{GzipCompression, SnappyCompression, LZ4Compression, ZstdCompression} {
		comp, err := compress(nil, codec, raw)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{byte(codec)}, comp...))
	}
	f.Add(append([]byte{SnappyCompression}, xerialSnappy(raw, 4<<10)...))
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 || data[0]%5 == NoCompression {
			return
		}
		codec, src := int(data[0]%5), data[1:]
		budget := NewBudget(2 * limit)
		var outs [2][]byte
		var errs [2]error
		for i, pooled := range []bool{true, false} {
			out, err := decompressRecords(context.Background(), budget, codec, src, limit, pooled, nil)
			errs[i] = err
			if err != nil {
				if !errors.Is(err, ErrDecompress) {
					t.Fatalf("error outside ErrDecompress: %v", err)
				}
				continue
			}
			if len(out.data) > limit {
				t.Fatalf("%d bytes decompressed past the cap", len(out.data))
			}
			outs[i] = bytes.Clone(out.data)
			out.release()
		}
		if now, _ := budget.InUse(); now != 0 {
			t.Fatalf("%d bytes of budget held", now)
		}
		if (errs[0] == nil) != (errs[1] == nil) || !bytes.Equal(outs[0], outs[1]) {
			t.Fatalf("pooled and fresh disagree: %v, %v", errs[0], errs[1])
		}
		ref, refErr, ok := referenceDecode(codec, src, limit)
		if !ok {
			return
		}
		if errs[0] == nil && (refErr != nil || !bytes.Equal(ref, outs[0])) {
			t.Fatalf("decoded %d bytes the plain decoder does not give (%v)", len(outs[0]), refErr)
		}
		if refErr == nil && len(ref) <= limit && errs[0] != nil {
			t.Fatalf("refused %d bytes the plain decoder gives: %v", len(ref), errs[0])
		}
	})
}

// referenceDecode is the codec's own decoder read to its end (at most
// limit+1 bytes); ok is false for codecs without one here (snappy).
func referenceDecode(codec int, src []byte, limit int) ([]byte, error, bool) {
	var r io.Reader
	switch codec {
	case GzipCompression:
		zr, err := gzip.NewReader(bytes.NewReader(src))
		if err != nil {
			return nil, err, true
		}
		r = zr
	case LZ4Compression:
		r = lz4.NewReader(bytes.NewReader(src))
	case ZstdCompression:
		dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(2*limit)))
		if err != nil {
			return nil, err, true
		}
		defer dec.Close()
		out, err := dec.DecodeAll(src, nil)
		return out, err, !errors.Is(err, zstd.ErrDecoderSizeExceeded)
	default:
		return nil, nil, false
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	return out, err, true
}
