package cli

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkRecordFormat renders one record through a typical -f format,
// the per-record cost of `sluice consume`.
func BenchmarkRecordFormat(b *testing.B) {
	f, err := parseRecordFormat(`%t %p %o %k=%v [%h] %T\n`)
	if err != nil {
		b.Fatal(err)
	}
	r := &kgo.Record{
		Topic: "orders", Partition: 3, Offset: 123456, Key: []byte("key-1"), Value: make([]byte, 100),
		Headers: []kgo.RecordHeader{{Key: "src", Value: []byte("cli")}}, Timestamp: time.UnixMilli(1700000000000),
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = f.append(buf[:0], r)
	}
}

// BenchmarkRecordJSON is the same for --json.
func BenchmarkRecordJSON(b *testing.B) {
	r := &kgo.Record{
		Topic: "orders", Partition: 3, Offset: 123456, Key: []byte("key-1"), Value: make([]byte, 100),
		Headers: []kgo.RecordHeader{{Key: "src", Value: []byte("cli")}}, Timestamp: time.UnixMilli(1700000000000),
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = appendJSON(buf[:0], r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLatencyRecord is the per-acknowledgement cost `sluice bench`
// adds to what it measures.
func BenchmarkLatencyRecord(b *testing.B) {
	s := &benchStats{start: time.Now()}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		s.add(100, time.Duration(i%50000)*time.Microsecond)
	}
}
