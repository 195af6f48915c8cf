package producerstate

import "testing"

// BenchmarkClientAppend measures the per-batch cost on the produce path:
// duplicate lookup, checks and commit for one of many producers.
func BenchmarkClientAppend(b *testing.B) {
	const producers = 1000
	m := New(Options{Name: "t-0"})
	seqs := make([]int32, producers)
	offset := int64(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		pid := int64(i % producers)
		a := m.BeginAppend(OriginClient)
		if _, err := a.AddBatch(dataBatch(pid, 0, seqs[pid], 10, offset, 1000, false)); err != nil {
			b.Fatal(err)
		}
		a.Commit()
		seqs[pid] += 10
		offset += 10
	}
}

// BenchmarkSnapshotRoundTrip measures encoding and decoding the state of 10k producers.
func BenchmarkSnapshotRoundTrip(b *testing.B) {
	entries := make([]*Entry, 10_000)
	for i := range entries {
		entries[i] = &Entry{ProducerID: int64(i), CurrentTxnFirstOffset: -1,
			batches: []BatchMetadata{{LastSeq: 9, LastOffset: int64(i) * 10, OffsetDelta: 9}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeSnapshot(EncodeSnapshot(entries)); err != nil {
			b.Fatal(err)
		}
	}
}
