package replication

import (
	"testing"
	"time"
)

// BenchmarkAppendRecords measures the produce path (validation, append,
// high watermark, acks=all completion) for 100-record batches.
func BenchmarkAppendRecords(b *testing.B) {
	for _, acks := range []int16{1, -1} {
		b.Run(map[int16]string{1: "acks=1", -1: "acks=all"}[acks], func(b *testing.B) {
			f := newFixture(b, nil)
			tmpl := batch(b, 100, testStart.UnixMilli())
			buf := make([]byte, len(tmpl))
			b.SetBytes(int64(len(tmpl)))
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, tmpl)
				res := f.rm.AppendRecords(b.Context(), AppendRequest{RequiredAcks: acks, Timeout: time.Second, ProduceVersion: 11,
					Partitions: []AppendPartition{{TP: tp("t", 0), Records: buf}}})
				if res[0].Err != nil {
					b.Fatal(res[0].Err)
				}
			}
		})
	}
}

// BenchmarkFetch measures a consumer fetch of up to 1 MiB from the middle
// of a log (index lookup, bounds, slices; no copying).
func BenchmarkFetch(b *testing.B) {
	f := newFixture(b, nil)
	tmpl := batch(b, 100, testStart.UnixMilli())
	for range 200 {
		buf := append([]byte(nil), tmpl...)
		if res := f.rm.AppendRecords(b.Context(), AppendRequest{RequiredAcks: 1, ProduceVersion: 11,
			Partitions: []AppendPartition{{TP: tp("t", 0), Records: buf}}}); res[0].Err != nil {
			b.Fatal(res[0].Err)
		}
	}
	parts := []FetchPartition{{TP: tp("t", 0), FetchOffset: 5000, CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}}
	b.ReportAllocs()
	for b.Loop() {
		out := f.rm.Fetch(b.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20}, parts)
		if out[0].Err != nil || out[0].Records.Size == 0 {
			b.Fatal(out[0].Err)
		}
	}
}
