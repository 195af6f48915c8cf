package cleaner

import (
	"encoding/binary"
	"runtime"
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

// TestCleanOverHeaderBombStaysBounded: a compacted log holding a record of
// millions of headers, in a batch the clean must rewrite (its other record
// is superseded), is cleaned at the cost of the batch's bytes (decoded once,
// walked twice, headers copied as encoded), and the record keeps them all.
func TestCleanOverHeaderBombStaysBounded(t *testing.T) {
	const headers = 4 << 20
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	opts := compactOptions()
	opts.SegmentBytes = 1 << 20
	l := openLog(t, fs, clk, opts, false)
	defer l.Close()
	ts := clk.Now().UnixMilli()
	if _, err := l.Append(bombBatch(t, headers, ts), 0); err != nil {
		t.Fatal(err)
	}
	appendRecords(t, l, clk, records.NoCompression, kv{key: "x", value: "2"})
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cleaned := cleanOnce(t, c)
	runtime.ReadMemStats(&after)
	if !cleaned {
		t.Fatal("dirty log not cleaned")
	}
	// The offset map's pass and the filter's each decode the 8 MiB once, the
	// rewrite copies them once more and zstd's encoder keeps a history of
	// up to twice its input: about 42 MiB (more under the race detector,
	// whose pools drop buffers). A list of the headers would cost 40 bytes
	// each, 160 MiB per pass.
	if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64<<20); got > limit {
		t.Fatalf("cleaning allocated %d bytes, more than %d", got, limit)
	}
	got, hdrs := readAll(t, l)
	if len(got) != 2 || got[0].key != "bomb" || got[0].offset != 1 || got[1].key != "x" || got[1].value != "2" {
		t.Fatalf("records after cleaning: %+v", got)
	}
	if hdrs[0].RecordCount != 1 || hdrs[0].LastOffsetDelta != 1 {
		t.Fatalf("rewritten batch %+v: want one record, offsets kept", hdrs[0])
	}
	res, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := res.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	err = records.ForEachRecord(b[:hdrs[0].Size()], func(r records.Record) error {
		if r.HeaderCount != headers {
			t.Fatalf("the bomb kept %d headers of %d", r.HeaderCount, headers)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bombBatch is a zstd batch of two records: key "x" (value "1"), then key
// "bomb" with n empty headers.
func bombBatch(t *testing.T, n int, ts int64) []byte {
	t.Helper()
	enc := func(dst []byte, offsetDelta int64, key string, headers int) []byte {
		var body []byte
		body = append(body, 0)
		body = binary.AppendVarint(body, 0)
		body = binary.AppendVarint(body, offsetDelta)
		body = binary.AppendVarint(body, int64(len(key)))
		body = append(body, key...)
		body = append(body, 2, 'v')
		body = binary.AppendVarint(body, int64(headers))
		dst = binary.AppendVarint(dst, int64(len(body)+2*headers))
		dst = append(dst, body...)
		for range headers {
			dst = append(dst, 0, 1)
		}
		return dst
	}
	raw := enc(enc(nil, 0, "x", 0), 1, "bomb", n)
	b, err := records.BuildEncoded(recordstest.Options(recordstest.Compression(records.ZstdCompression)), 2, ts, ts, raw)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
