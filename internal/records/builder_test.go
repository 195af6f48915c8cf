package records

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type wantRecord struct {
	ts         int64
	key, value []byte
	headers    []RecordHeader
}

func sampleRecords() []wantRecord {
	return []wantRecord{
		{testNow, []byte("k0"), []byte("v0"), []RecordHeader{{Key: "a", Value: []byte("1")}, {Key: "b", Value: nil}}},
		{testNow + 5, nil, []byte("v1"), nil},
		{testNow - 3, []byte("k2"), nil, nil},
		{testNow + 2, []byte{}, bytes.Repeat([]byte("x"), 3000), nil},
	}
}

// kgoDecompress reads a compressed payload with franz-go's consumer code.
func kgoDecompress(t *testing.T, codec int, payload []byte) []byte {
	t.Helper()
	if codec == NoCompression {
		return payload
	}
	out, err := kgo.DefaultDecompressor().Decompress(payload, kgo.CompressionCodecType(codec))
	if err != nil {
		t.Fatalf("kgo cannot decompress our %s batch: %v", codecName(codec), err)
	}
	return out
}

func TestBuilderRoundTripsThroughKmsgAndForEachRecord(t *testing.T) {
	for _, c := range codecs {
		t.Run(c.name, func(t *testing.T) {
			opts := BuilderOptions{Compression: c.id, BaseOffset: 100, PartitionLeaderEpoch: 7,
				ProducerID: 42, ProducerEpoch: 3, BaseSequence: 10, Transactional: true, LogAppendTimeMs: -1}
			bld := NewBuilder(opts)
			want := sampleRecords()
			for _, r := range want {
				bld.Add(r.ts, r.key, r.value, r.headers)
			}
			b, err := bld.Build()
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckCRC(b); err != nil {
				t.Fatal(err)
			}
			// kmsg's view of our bytes.
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(b); err != nil {
				t.Fatal(err)
			}
			if rb.FirstOffset != 100 || rb.PartitionLeaderEpoch != 7 || rb.ProducerID != 42 || rb.ProducerEpoch != 3 ||
				rb.FirstSequence != 10 || rb.NumRecords != 4 || rb.LastOffsetDelta != 3 ||
				rb.FirstTimestamp != testNow || rb.MaxTimestamp != testNow+5 || rb.Attributes != int16(c.id)|TransactionalBit {
				t.Fatalf("kmsg batch %+v", rb)
			}
			if int(rb.Length) != len(b)-LogOverhead || !bytes.Equal(rb.AppendTo(nil), b) {
				t.Fatal("kmsg re-encoding differs from our bytes")
			}
			raw := kgoDecompress(t, c.id, rb.Records)
			for i := range want {
				var kr kmsg.Record
				if err := kr.ReadFrom(raw); err != nil {
					t.Fatalf("kmsg record %d: %v", i, err)
				}
				if kr.OffsetDelta != int32(i) || testNow+kr.TimestampDelta64 != want[i].ts ||
					!bytes.Equal(kr.Key, want[i].key) || !bytes.Equal(kr.Value, want[i].value) || len(kr.Headers) != len(want[i].headers) {
					t.Fatalf("kmsg record %d = %+v", i, kr)
				}
				raw = raw[len(kr.AppendTo(nil)):]
			}
			if len(raw) != 0 {
				t.Fatalf("%d bytes after the records", len(raw))
			}
			// Our own reader.
			h, _ := ParseHeader(b)
			i := 0
			if err := ForEachRecord(b, func(r Record) error {
				w := want[i]
				if r.Offset(h) != 100+int64(i) || r.Timestamp(h) != w.ts || (r.Key == nil) != (w.key == nil) ||
					!bytes.Equal(r.Key, w.key) || (r.Value == nil) != (w.value == nil) || !bytes.Equal(r.Value, w.value) ||
					fmt.Sprint(mustHeaders(t, r)) != fmt.Sprint(w.headers) {
					t.Fatalf("record %d = %+v", i, r)
				}
				i++
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if i != len(want) {
				t.Fatalf("read %d records", i)
			}
			// And the produce path accepts it once it looks produced.
			SetBaseOffset(b, 0)
			vopts := defaultOpts()
			if _, err := Validate(context.Background(), b, vopts); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBuilderRefusesEmptyBatchAndUnknownCodec(t *testing.T) {
	if _, err := NewBuilder(NonIdempotent(NoCompression)).Build(); err == nil {
		t.Fatal("empty batch built")
	}
	b := NewBuilder(NonIdempotent(6))
	b.Add(1, nil, nil, nil)
	if _, err := b.Build(); !errors.Is(err, ErrUnknownCompression) {
		t.Fatalf("got %v", err)
	}
}

func TestBuilderLogAppendTime(t *testing.T) {
	opts := NonIdempotent(LZ4Compression)
	opts.LogAppendTimeMs = testNow + 1000
	bld := NewBuilder(opts)
	bld.Add(testNow, []byte("k"), []byte("v"), nil)
	b, err := bld.Build()
	if err != nil {
		t.Fatal(err)
	}
	h, _ := ParseHeader(b)
	if !h.IsLogAppendTime() || h.MaxTimestamp != testNow+1000 {
		t.Fatalf("header %+v", h)
	}
}

func TestEndTxnMarkerRoundTrip(t *testing.T) {
	for _, commit := range []bool{false, true} {
		opts := BuilderOptions{ProducerID: 9, ProducerEpoch: 4, BaseSequence: -1, LogAppendTimeMs: -1}
		b, err := BuildEndTxnMarker(opts, commit, 77, testNow)
		if err != nil {
			t.Fatal(err)
		}
		h, _ := ParseHeader(b)
		if !h.IsControl() || !h.IsTransactional() || h.RecordCount != 1 {
			t.Fatalf("header %+v", h)
		}
		var n int
		if err := ForEachRecord(b, func(r Record) error {
			n++
			k, err := ParseControlKey(r.Key)
			if err != nil {
				return err
			}
			want := ControlAbort
			if commit {
				want = ControlCommit
			}
			if k.Version != 0 || k.Type != want {
				t.Fatalf("control key %+v", k)
			}
			m, err := ParseEndTxnMarker(r.Value)
			if err != nil {
				return err
			}
			if m != (EndTxnMarker{CoordinatorEpoch: 77}) {
				t.Fatalf("marker %+v", m)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("%d records", n)
		}
		// kmsg agrees on the key layout.
		var kk kmsg.EndTxnMarker
		if err := ForEachRecord(b, func(r Record) error { return kk.ReadFrom(r.Value) }); err != nil {
			t.Fatal(err)
		}
		if kk.CoordinatorEpoch != 77 {
			t.Fatalf("kmsg marker %+v", kk)
		}
	}
}

func TestControlParsersRefuseShortInput(t *testing.T) {
	if _, err := ParseControlKey([]byte{0, 0, 0}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("short key: %v", err)
	}
	if _, err := ParseEndTxnMarker([]byte{0, 0, 0, 0, 1}); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("short marker: %v", err)
	}
	if _, err := ParseControlKey([]byte{0xff, 0xff, 0, 1}); err == nil {
		t.Fatal("negative version accepted")
	}
	// A later version with extra bytes still reads.
	k, err := ParseControlKey([]byte{0, 1, 0, 1, 9, 9})
	if err != nil || k.Type != ControlCommit || k.Version != 1 {
		t.Fatalf("%+v %v", k, err)
	}
}

func TestForEachRecordRefusesBadBatches(t *testing.T) {
	good := kmsgBatch(t, GzipCompression, testRecords(3, 10), nil)
	if err := ForEachRecord(good[:len(good)-1], func(Record) error { return nil }); !errors.Is(err, ErrBadLength) {
		t.Fatalf("short batch: %v", err)
	}
	stop := errors.New("stop")
	if err := ForEachRecord(good, func(Record) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("callback error lost: %v", err)
	}
	bad := rewrite(good, func(b []byte) { b[len(b)-5] ^= 0xff })
	if err := ForEachRecord(bad, func(Record) error { return nil }); !errors.Is(err, ErrDecompress) {
		t.Fatalf("damaged gzip: %v", err)
	}
}

func TestDecompressLimit(t *testing.T) {
	raw := bytes.Repeat([]byte("z"), 1<<16)
	for _, c := range codecs[1:] {
		t.Run(c.name, func(t *testing.T) {
			comp, err := compress(nil, c.id, raw)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := decompressAll(c.id, comp, 1<<16); err != nil || len(out) != 1<<16 {
				t.Fatalf("at the limit: %v, %d bytes", err, len(out))
			}
			if _, err := decompressAll(c.id, comp, 1<<16-1); err == nil {
				t.Fatal("limit not enforced")
			}
		})
	}
}
