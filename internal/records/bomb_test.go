package records_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

const bombNow int64 = 1_700_000_000_000

func produceOpts() records.ValidateOptions {
	return records.ValidateOptions{NowMs: bombNow, TimestampBeforeMaxMs: math.MaxInt64, TimestampAfterMaxMs: 3_600_000}
}

// allocated runs f and returns the bytes it allocated (the whole process's,
// so tests using it do not run in parallel), divided by allocSlack.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / allocSlack
}

// TestHeaderBombIsReadWithoutKeepingHeaders: a record of millions of empty
// headers in a few KB of zstd is accepted, as Kafka's validator accepts it,
// and every way of reading it costs its decompressed bytes, not a list of
// its headers.
func TestHeaderBombIsReadWithoutKeepingHeaders(t *testing.T) {
	const n = 4 << 20
	bomb, err := recordstest.HeaderBomb(n, records.ZstdCompression, bombNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(bomb) > 4<<10 {
		t.Fatalf("header bomb of %d bytes", len(bomb))
	}
	decompressed := uint64(2*n + 64)
	var verr error
	if got := allocated(func() { _, verr = records.Validate(context.Background(), bomb, produceOpts()) }); got > decompressed+(4<<20) {
		t.Fatalf("Validate allocated %d bytes for %d decompressed", got, decompressed)
	}
	if verr != nil {
		t.Fatalf("Kafka accepts a record of many headers: %v", verr)
	}
	dec := records.NewDecoder(records.NewBudget(64<<20), 0)
	var count int32
	walk := func() error {
		return dec.ForEachRecord(context.Background(), bomb, func(r records.Record) error {
			count = r.HeaderCount
			if _, err := r.Headers(1000); !errors.Is(err, records.ErrTooManyHeaders) {
				t.Fatalf("Headers(1000) of %d headers: %v", r.HeaderCount, err)
			}
			if raw := r.RawHeaders(); len(raw) != 4+2*n {
				t.Fatalf("raw headers of %d bytes", len(raw))
			}
			seen := 0
			return r.EachHeader(func(k, v []byte) error {
				if len(k) != 0 || v != nil {
					t.Fatalf("header %d = %q %q", seen, k, v)
				}
				seen++
				return nil
			})
		})
	}
	if got := allocated(func() { err = walk() }); got > decompressed+(4<<20) {
		t.Fatalf("reading allocated %d bytes for %d decompressed", got, decompressed)
	}
	if err != nil || count != n {
		t.Fatalf("read %d headers: %v", count, err)
	}
	if now, _ := dec.Budget().InUse(); now != 0 {
		t.Fatalf("%d bytes of budget still held", now)
	}
}

// TestCountsAreCheckedBeforeAllocating: claimed counts that the bytes
// cannot hold are refused at once, allocating nothing in proportion.
func TestCountsAreCheckedBeforeAllocating(t *testing.T) {
	// One record claiming 32 million headers in 5 KB.
	var body []byte
	body = append(body, 0, 0, 0, 2, 'k', 2, 'v')
	body = binary.AppendVarint(body, 32<<20)
	body = append(body, bytes.Repeat([]byte{0, 1}, 2500)...)
	rec := append(binary.AppendVarint(nil, int64(len(body))), body...)
	batch, err := records.BuildEncoded(recordstest.Options(), 1, bombNow, bombNow, rec)
	if err != nil {
		t.Fatal(err)
	}
	if got := allocated(func() { err = records.ForEachRecord(batch, func(records.Record) error { return nil }) }); got > 64<<10 {
		t.Fatalf("refusing a header count allocated %d bytes", got)
	}
	if !errors.Is(err, records.ErrInvalidRecord) || !strings.Contains(err.Error(), "header count 33554432 cannot fit") {
		t.Fatalf("header count beyond the bytes: %v", err)
	}
	if _, err := records.Validate(context.Background(), batch, produceOpts()); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("Validate of the header count: %v", err)
	}

	// A compressed batch claiming 2^31-1 records is refused before it is
	// decompressed: no batch within the cap holds them.
	bomb, err := recordstest.DecompressionBomb(records.GzipCompression, 64<<10, bombNow)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint32(bomb[records.OffsetRecordCount:], math.MaxInt32)
	records.UpdateCRC(bomb)
	if got := allocated(func() { err = records.ForEachRecord(bomb, func(records.Record) error { return nil }) }); got > 64<<10 {
		t.Fatalf("refusing a record count allocated %d bytes", got)
	}
	if !errors.Is(err, records.ErrInvalidRecord) || !strings.Contains(err.Error(), "records cannot fit") {
		t.Fatalf("record count beyond the cap: %v", err)
	}
}

// TestDecompressionBombsCostOneSmallBuffer: bombs of every codec are
// refused on their first bytes, or on their size before any is kept,
// within a few MiB whatever they expand to; so are bombs whose first bytes
// frame a record claiming more than they hold.
func TestDecompressionBombsCostOneSmallBuffer(t *testing.T) {
	// maxAlloc: the first try's buffer (8 times the bomb), the codec's
	// state (lz4 blocks of 4 MiB), or for snappy its declared 20 MiB.
	for _, c := range []struct {
		name                  string
		codec, size, maxAlloc int
	}{
		{"gzip", records.GzipCompression, 64 << 10, 2 << 20},      // about 64 MiB
		{"lz4", records.LZ4Compression, 256 << 10, 8 << 20},       // about 64 MiB
		{"zstd", records.ZstdCompression, 64 << 10, 2 << 20},      // 2 GiB
		{"snappy", records.SnappyCompression, 256 << 10, 8 << 20}, // 5 MiB, declared
	} {
		for name, build := range map[string]func(int, int, int64) ([]byte, error){
			c.name: recordstest.DecompressionBomb, c.name + " framed": recordstest.FramedDecompressionBomb} {
			t.Run(name, func(t *testing.T) {
				bomb, err := build(c.codec, c.size, bombNow)
				if err != nil {
					t.Fatal(err)
				}
				budget := records.NewBudget(0)
				opts := produceOpts()
				opts.Decoder = records.NewDecoder(budget, 0)
				var verr error
				got := allocated(func() { _, verr = records.Validate(context.Background(), bomb, opts) })
				var ve *records.ValidationError
				if !errors.As(verr, &ve) || (ve.Err != kerr.InvalidRecord && ve.Err != kerr.CorruptMessage) {
					t.Fatalf("bomb: %v", verr)
				}
				if got > uint64(c.maxAlloc) {
					t.Fatalf("refusing the bomb allocated %d bytes", got)
				}
				if now, _ := budget.InUse(); now != 0 {
					t.Fatalf("%d bytes of budget still held", now)
				}
			})
		}
	}
}

// TestOversizedValidRecordsAreRefusedByTheCap: records that frame well
// (so the first bytes pass) but decompress past the cap are counted,
// keeping nothing, and refused.
func TestOversizedValidRecordsAreRefusedByTheCap(t *testing.T) {
	rec := []byte{12, 0, 0, 0, 1, 1, 0} // 6-byte body: no key, no value, no header
	// 21 MiB of records, of which the batch claims as many as the cap of
	// 4 MiB could hold (more is refused before decompressing).
	raw := bytes.Repeat(rec, 3<<20)
	const claimed = 500_000
	for _, codec := range []int{records.GzipCompression, records.LZ4Compression, records.ZstdCompression} {
		body := compressStream(t, codec, raw, 0)
		batch := recordstest.Assemble(recordstest.Options(recordstest.Compression(codec)), claimed, bombNow, bombNow, body)
		dec := records.NewDecoder(records.NewBudget(0), 4<<20)
		var err error
		got := allocated(func() {
			err = dec.ForEachRecord(context.Background(), batch, func(records.Record) error { return nil })
		})
		if !errors.Is(err, records.ErrDecompress) || !strings.Contains(err.Error(), "exceeds the limit") {
			t.Fatalf("codec %d: %v", codec, err)
		}
		// The first try's buffer, then the codec's state while counting:
		// zstd's window ring (8 MiB here) is the largest.
		if got > 10<<20 {
			t.Fatalf("codec %d: refusing allocated %d bytes", codec, got)
		}
		// Produce refuses it on its first bytes: offset deltas must count up.
		opts := produceOpts()
		opts.Decoder = dec
		if _, err := records.Validate(context.Background(), batch, opts); !errors.Is(err, kerr.InvalidRecord) {
			t.Fatalf("codec %d: Validate: %v", codec, err)
		}
	}
}

// TestLargeBatchesDecodeAlongEveryPath: batches too large for the first
// try (counted, then decoded into their exact size), zstd with and without
// a declared size and with a window too large to stream, all read back.
func TestLargeBatchesDecodeAlongEveryPath(t *testing.T) {
	recs := recordstest.N(2000, func(i int) recordstest.Record {
		return recordstest.Record{Timestamp: bombNow + int64(i), Key: []byte{byte(i), byte(i >> 8)},
			Value: bytes.Repeat([]byte{byte('a' + i%26)}, 2000), Headers: []records.RecordHeader{{Key: "h", Value: []byte{byte(i)}}}}
	})
	plain := recordstest.Batch(t, recs)
	h, err := records.ParseHeader(plain)
	if err != nil {
		t.Fatal(err)
	}
	raw := plain[records.HeaderSize:]
	cases := map[string][]byte{}
	for name, c := range map[string]struct {
		codec, window int
	}{"gzip": {records.GzipCompression, 0}, "lz4": {records.LZ4Compression, 0},
		"zstd stream": {records.ZstdCompression, 0}, "zstd 32 MiB window": {records.ZstdCompression, 32 << 20}} {
		cases[name] = recordstest.Assemble(recordstest.Options(recordstest.Compression(c.codec)), h.RecordCount,
			h.BaseTimestamp, h.MaxTimestamp, compressStream(t, c.codec, raw, c.window))
	}
	for _, codec := range []int{records.ZstdCompression, records.SnappyCompression} {
		b, err := records.BuildEncoded(recordstest.Options(recordstest.Compression(codec)), h.RecordCount, h.BaseTimestamp, h.MaxTimestamp, raw)
		if err != nil {
			t.Fatal(err)
		}
		cases["declared codec "+string(rune('0'+codec))] = b
	}
	for name, batch := range cases {
		t.Run(name, func(t *testing.T) {
			if len(batch)*8 >= len(raw) {
				t.Fatalf("batch of %d bytes fits the first try (%d raw)", len(batch), len(raw))
			}
			budget := records.NewBudget(0)
			opts := produceOpts()
			opts.Decoder = records.NewDecoder(budget, 0)
			if _, err := records.Validate(context.Background(), bytes.Clone(batch), opts); err != nil {
				t.Fatal(err)
			}
			i := 0
			err := opts.Decoder.ForEachRecord(context.Background(), batch, func(r records.Record) error {
				hs, err := r.Headers(1)
				if !bytes.Equal(r.Value, recs[i].Value) || !bytes.Equal(r.Key, recs[i].Key) || err != nil || len(hs) != 1 || hs[0].Value[0] != byte(i) {
					t.Fatalf("record %d differs (%v)", i, err)
				}
				i++
				return nil
			})
			if err != nil || i != len(recs) {
				t.Fatalf("read %d records: %v", i, err)
			}
			if now, peak := budget.InUse(); now != 0 || peak < int64(len(raw)) {
				t.Fatalf("budget in use %d, peak %d for %d bytes", now, peak, len(raw))
			}
		})
	}
}

// compressStream compresses raw as a stream, as the Java client does (zstd
// without a content size; window, when set, is zstd's window size).
func compressStream(t *testing.T, codec int, raw []byte, window int) []byte {
	t.Helper()
	var out bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	var err error
	switch codec {
	case records.GzipCompression:
		w = gzip.NewWriter(&out)
	case records.LZ4Compression:
		zw := lz4.NewWriter(&out)
		err = zw.Apply(lz4.BlockSizeOption(lz4.Block64Kb))
		w = zw
	case records.ZstdCompression:
		opts := []zstd.EOption{zstd.WithEncoderConcurrency(1)}
		if window > 0 {
			opts = append(opts, zstd.WithWindowSize(window), zstd.WithEncoderLevel(zstd.SpeedBestCompression))
		}
		w, err = zstd.NewWriter(&out, opts...)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
