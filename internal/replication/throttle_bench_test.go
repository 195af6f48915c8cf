package replication

import (
	"testing"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
)

// BenchmarkFollowerFetch measures the leader's side of a follower's
// fetch (the follower fetch state update, the throttle check, the read of
// up to 1 MiB) with no replication throttle set: the cost the throttle
// adds to unthrottled replication. It compiles against the tree before the
// throttle too, for a before/after comparison:
//
//	go test -run '^$' -bench 'FollowerFetch$' -count 10 ./internal/replication
func BenchmarkFollowerFetch(b *testing.B) {
	f := newFixture(b, nil)
	d := metadata.NewDelta(f.rm.Image())
	if err := d.Replay(f.rm.Image().Offset()+1, 2, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0,
		Leader: metadata.NoLeaderChange, Replicas: []int32{1, 2}, ISR: []int32{1, 2}}); err != nil {
		b.Fatal(err)
	}
	f.rm.ApplyDelta(d, d.Apply())
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
		out := f.rm.Fetch(b.Context(), FetchParams{ReplicaID: 2, ReplicaEpoch: -1, MaxBytes: 10 << 20}, parts)
		if out[0].Err != nil || out[0].Records.Size == 0 {
			b.Fatal(out[0].Err)
		}
	}
}
