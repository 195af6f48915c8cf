package replication

import (
	"sync/atomic"
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

// BenchmarkReplicatedProduce compares, in one run, acks=all on 3 replicas
// (in-process brokers, followers fetching over LocalTransport) with acks=1
// on a single replica: GOMAXPROCS producers appending 100-record batches to
// one of two partitions.
//
//	go test -run '^$' -bench ReplicatedProduce -benchtime 2000x ./internal/replication
func BenchmarkReplicatedProduce(b *testing.B) {
	tmpl := batch(b, 100, testStart.UnixMilli())
	run := func(b *testing.B, leaderFor func(p int32) *ReplicaManager, topic string, acks int16) {
		b.SetBytes(int64(len(tmpl)))
		b.SetParallelism(1)
		var next atomic.Int32
		b.RunParallel(func(pb *testing.PB) {
			p := next.Add(1) % 2
			buf := make([]byte, len(tmpl))
			for pb.Next() {
				copy(buf, tmpl)
				res := leaderFor(p).AppendRecords(b.Context(), AppendRequest{RequiredAcks: acks, Timeout: 5 * time.Second, ProduceVersion: 11,
					Partitions: []AppendPartition{{TP: tp(topic, p), Records: buf}}})
				if res[0].Err != nil {
					b.Error(res[0].Err)
					return
				}
			}
		})
	}
	b.Run("acks=1,rf=1", func(b *testing.B) {
		f := newFixture(b, nil)
		run(b, func(int32) *ReplicaManager { return f.rm }, "t", 1)
	})
	b.Run("acks=all,rf=3", func(b *testing.B) {
		c := newSimCluster(b, 1, 3, 3, false)
		leaders := make([]*ReplicaManager, 3)
		c.mu.Lock()
		for p := range int32(3) {
			st, _ := c.mu.image.Partition(tp(c.topic, p))
			leaders[p] = c.mu.brokers[st.Leader].rm
		}
		c.mu.Unlock()
		run(b, func(p int32) *ReplicaManager { return leaders[p] }, c.topic, -1)
	})
}
