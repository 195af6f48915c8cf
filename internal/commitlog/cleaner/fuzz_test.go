package cleaner

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"

	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
)

// keptRecord is what the filter must keep of a record: everything but the
// timestamp delta, which a rewrite re-bases.
type keptRecord struct {
	key, value, headers []byte
	nullKey, nullValue  bool
}

// FuzzFilter runs the cleaner's filter over a batch of arbitrary records
// (input: [codec][record count, 4 bytes][records as stored]) against an
// offset map that supersedes some keys: it either fails or writes at most
// one batch, with a valid CRC, whose records are some of the input's at
// their offsets, keys, values and headers unchanged; the decoder's budget
// is returned either way. Committed seeds include the 32-million-header
// bomb (refused on its declared 64 MB by the fuzzer's 16 MiB cap) and
// one of 256 Ki headers.
func FuzzFilter(f *testing.F) {
	good := recordstest.Batch(f, recordstest.N(4, func(i int) recordstest.Record {
		r := recordstest.Record{Timestamp: testStart.UnixMilli() + int64(i), Key: []byte{'a' + byte(i%2)}, Value: []byte{byte(i)},
			Headers: []records.RecordHeader{{Key: "h", Value: []byte{byte(i)}}}}
		if i == 3 {
			r.Value = nil
		}
		return r
	}))
	f.Add(append(binary.BigEndian.AppendUint32([]byte{records.NoCompression}, 4), good[records.HeaderSize:]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 5 {
			return
		}
		codec, count := int(data[0]%5), int32(binary.BigEndian.Uint32(data[1:5]))
		opts := recordstest.Options(recordstest.Compression(codec), recordstest.BaseOffset(100))
		batch := recordstest.Assemble(opts, count, testStart.UnixMilli(), testStart.UnixMilli()+10, data[5:])
		h, err := records.ParseHeader(batch)
		if err != nil {
			t.Fatal(err)
		}
		offsets := newOffsetMap(1<<16, 0.9)
		offsets.put([]byte("a"), 150) // supersedes "a" below offset 150
		offsets.put([]byte{}, 101)
		budget := records.NewBudget(32 << 20)
		filter := &batchFilter{offsets: offsets, mapEnd: 120, nowMs: testStart.UnixMilli(), deleteRetentionMs: 1000,
			producerLast: map[int64]int64{}, txns: newTxnTracker(nil), comp: &compressor{},
			decoder: records.NewDecoder(budget, 16<<20), horizon: -1}
		out, err := filter.filter(context.Background(), nil, batch, h)
		if now, _ := budget.InUse(); now != 0 {
			t.Fatalf("%d bytes of budget held", now)
		}
		if err != nil {
			return
		}
		// Offsets may repeat in a batch Produce would refuse; the log can
		// still hold one (an older build's), so each offset keeps a list.
		in := map[int64][]keptRecord{}
		if err := records.ForEachRecord(batch, func(r records.Record) error {
			in[r.Offset(h)] = append(in[r.Offset(h)], kept(r))
			return nil
		}); err != nil {
			t.Fatalf("the filter read a batch ForEachRecord refuses: %v", err)
		}
		checkFiltered(t, out, in)
	})
}

func kept(r records.Record) keptRecord {
	return keptRecord{key: bytes.Clone(r.Key), value: bytes.Clone(r.Value), headers: bytes.Clone(r.RawHeaders()),
		nullKey: r.Key == nil, nullValue: r.Value == nil}
}

// checkFiltered checks the filter's output against the input's records.
func checkFiltered(t *testing.T, out []byte, in map[int64][]keptRecord) {
	t.Helper()
	rest, err := records.Batches(out, func(oh records.Header, ob []byte) error {
		if err := records.CheckCRC(ob); err != nil {
			t.Fatalf("written batch: %v", err)
		}
		return records.ForEachRecord(ob, func(r records.Record) error {
			got := kept(r)
			for _, want := range in[r.Offset(oh)] {
				if bytes.Equal(got.key, want.key) && bytes.Equal(got.value, want.value) &&
					bytes.Equal(got.headers, want.headers) && got.nullKey == want.nullKey && got.nullValue == want.nullValue {
					return nil
				}
			}
			t.Fatalf("written record at offset %d, %+v, is none of the batch's there: %+v", r.Offset(oh), got, in[r.Offset(oh)])
			return nil
		})
	})
	if err != nil || rest != len(out) {
		t.Fatalf("written bytes: %v (%d of %d are whole batches)", err, rest, len(out))
	}
}
