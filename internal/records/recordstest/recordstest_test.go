package recordstest

import (
	"bytes"
	"testing"

	"github.com/sluice-io/sluice/internal/records"
)

func TestBatch(t *testing.T) {
	recs := []Record{
		{Timestamp: 1000, Key: []byte("k"), Value: []byte("v"), Headers: []records.RecordHeader{{Key: "h", Value: []byte("x")}}},
		{Timestamp: 1005, Value: nil},
	}
	cases := []struct {
		name  string
		opts  []Option
		check func(t *testing.T, h records.Header)
	}{
		{"plain", nil, func(t *testing.T, h records.Header) {
			if h.ProducerID != -1 || h.ProducerEpoch != -1 || h.BaseSequence != -1 || h.Attributes != 0 || h.PartitionLeaderEpoch != 0 {
				t.Fatalf("plain batch header %+v", h)
			}
		}},
		{"idempotent transactional", []Option{Producer(7, 2, 40), Transactional()}, func(t *testing.T, h records.Header) {
			if h.ProducerID != 7 || h.ProducerEpoch != 2 || h.BaseSequence != 40 || h.Attributes&records.TransactionalBit == 0 {
				t.Fatalf("producer batch header %+v", h)
			}
		}},
		{"compressed", []Option{Compression(records.ZstdCompression)}, func(t *testing.T, h records.Header) {
			if h.Attributes&7 != records.ZstdCompression {
				t.Fatalf("attributes %#x, want zstd", h.Attributes)
			}
		}},
		{"offsets and epoch", []Option{BaseOffset(100), LeaderEpoch(-1)}, func(t *testing.T, h records.Header) {
			if h.BaseOffset != 100 || h.PartitionLeaderEpoch != -1 {
				t.Fatalf("header %+v", h)
			}
		}},
		{"log append time", []Option{LogAppendTime(5000)}, func(t *testing.T, h records.Header) {
			if !h.IsLogAppendTime() || h.MaxTimestamp != 5000 {
				t.Fatalf("header %+v", h)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := Batch(t, recs, c.opts...)
			if err := records.CheckCRC(b); err != nil {
				t.Fatal(err)
			}
			h, err := records.ParseHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			if h.RecordCount != 2 || h.BaseTimestamp != 1000 {
				t.Fatalf("header %+v", h)
			}
			c.check(t, h)
			var got []records.Record
			if err := records.ForEachRecord(b, func(r records.Record) error {
				r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
				got = append(got, r)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			wantTs := int64(1005)
			if h.IsLogAppendTime() {
				wantTs = h.MaxTimestamp
			}
			if len(got) != 2 || string(got[0].Key) != "k" || string(got[0].Value) != "v" || got[0].HeaderCount != 1 ||
				got[1].Key != nil || got[1].Value != nil || got[1].Timestamp(h) != wantTs {
				t.Fatalf("records %+v", got)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	if _, err := Build(nil); err == nil {
		t.Fatal("an empty batch built")
	}
	vs := Values(42, "a", "b")
	if len(vs) != 2 || vs[1].Timestamp != 42 || string(vs[1].Value) != "b" || vs[0].Key != nil {
		t.Fatalf("Values = %+v", vs)
	}
	m := Marker(t, true, 3, 42, Producer(9, 1, -1))
	h, err := records.ParseHeader(m)
	if err != nil || h.Attributes&records.ControlBit == 0 || h.ProducerID != 9 {
		t.Fatalf("marker header %+v, %v", h, err)
	}
}
