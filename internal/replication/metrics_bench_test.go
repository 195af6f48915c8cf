package replication

import (
	"testing"
	"time"
)

// BenchmarkProduceCounters measures the produce path (acks=1, 100-record
// batches) with the BrokerTopicMetrics counters and without them, in one
// run:
//
//	go test -run '^$' -bench ProduceCounters -count 6 ./internal/replication
func BenchmarkProduceCounters(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "counters=off", true: "counters=on"}[on], func(b *testing.B) {
			f := newFixture(b, nil)
			p, err := f.rm.Partition(tp("t", 0))
			if err != nil {
				b.Fatal(err)
			}
			if !on {
				p.metrics = nil
			}
			tmpl := batch(b, 100, testStart.UnixMilli())
			buf := make([]byte, len(tmpl))
			b.SetBytes(int64(len(tmpl)))
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, tmpl)
				res := f.rm.AppendRecords(b.Context(), AppendRequest{RequiredAcks: 1, Timeout: time.Second, ProduceVersion: 11,
					Partitions: []AppendPartition{{TP: tp("t", 0), Records: buf}}})
				if res[0].Err != nil {
					b.Fatal(res[0].Err)
				}
			}
			if all, _ := f.rm.BrokerTopicStats().Snapshot(); on && all.BytesIn == 0 {
				b.Fatal("counters on, nothing counted")
			}
		})
	}
}

// BenchmarkProducedCount measures the counting alone that a produce adds
// (one partition's successful append), which the load of a shared machine
// hides in BenchmarkProduceCounters' spread.
func BenchmarkProducedCount(b *testing.B) {
	f := newFixture(b, nil)
	p, err := f.rm.Partition(tp("t", 0))
	if err != nil {
		b.Fatal(err)
	}
	res := AppendResult{FirstOffset: 0, LastOffset: 99}
	b.ReportAllocs()
	for b.Loop() {
		p.metrics.produced(7000, res)
	}
	if all, _ := f.rm.BrokerTopicStats().Snapshot(); all.TotalProduceRequests != int64(b.N) {
		b.Fatalf("%d counted, want %d", all.TotalProduceRequests, b.N)
	}
}
