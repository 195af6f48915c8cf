package replication

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
)

// fakeQuota is a ReplicaQuota whose state the test sets.
type fakeQuota struct {
	mu        sync.Mutex
	throttled map[kafka.TopicPartition]bool
	exceeded  bool
	recorded  int64
}

func (q *fakeQuota) AnyThrottled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.throttled) > 0
}

func (q *fakeQuota) IsThrottled(tp kafka.TopicPartition) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.throttled[tp]
}

func (q *fakeQuota) IsQuotaExceeded() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.exceeded
}

func (q *fakeQuota) Record(n int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.recorded += n
}

func (q *fakeQuota) set(exceeded bool) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.exceeded = exceeded
	r := q.recorded
	q.recorded = 0
	return r
}

// TestLeaderThrottle follows ReplicaManager.shouldLeaderThrottle and
// KafkaApis' recording: a follower outside the ISR fetching a throttled
// partition gets no records while the leader quota is exceeded, the bytes
// it does get are recorded, and unthrottled partitions and in-sync
// followers are never held back.
func TestLeaderThrottle(t *testing.T) {
	q := &fakeQuota{throttled: map[kafka.TopicPartition]bool{tp("t", 0): true}}
	f := newFixtureWith(t, nil, func(o *Options) { o.Replication.LeaderQuota = q })
	for _, p := range []int32{0, 1} {
		f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: p,
			Leader: metadata.NoLeaderChange, Replicas: []int32{1, 2}, ISR: []int32{1}})
		res := f.produce(t, 1, AppendPartition{TP: tp("t", p), Records: batch(t, 3, testStart.UnixMilli())})
		wantCode(t, "produce", res[0].Err, nil)
	}
	fetch := func(replica int32) []FetchPartitionResult {
		return f.rm.Fetch(t.Context(), FetchParams{ReplicaID: replica, ReplicaEpoch: -1, MaxBytes: 1 << 20, MinBytes: 1},
			[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20},
				{TP: tp("t", 1), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	}
	res := fetch(2)
	if res[0].Records.Size == 0 || res[1].Records.Size == 0 {
		t.Fatalf("quota not exceeded: sizes %d, %d, want both records", res[0].Records.Size, res[1].Records.Size)
	}
	if got := q.set(true); got != res[0].Records.Size {
		t.Fatalf("recorded %d bytes, want the throttled partition's %d", got, res[0].Records.Size)
	}
	res = fetch(2)
	if res[0].Err != nil || res[0].Records.Size != 0 || res[0].HighWatermark < 0 {
		t.Fatalf("throttled partition while exceeded: %+v, want no records and its offsets", res[0])
	}
	if res[1].Records.Size == 0 {
		t.Fatal("an unthrottled partition was held back")
	}
	if got := q.set(true); got != 0 {
		t.Fatalf("recorded %d bytes for an answer without throttled records", got)
	}
	// A consumer is never throttled by the replication quota.
	cons := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	if cons[0].Records.Size == 0 {
		t.Fatal("a consumer's fetch was throttled")
	}
	// In the ISR: not throttled, to avoid ISR thrashing.
	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0,
		Leader: metadata.NoLeaderChange, ISR: []int32{1, 2}})
	if res = fetch(2); res[0].Records.Size == 0 {
		t.Fatal("an in-sync follower was throttled")
	}
}

// TestLeaderThrottledFetchWaits: a follower's fetch holding only
// throttled partitions counts none of their bytes towards MinBytes, so it
// waits out MaxWait as Kafka's DelayedFetch does.
func TestLeaderThrottledFetchWaits(t *testing.T) {
	q := &fakeQuota{throttled: map[kafka.TopicPartition]bool{tp("t", 0): true}, exceeded: true}
	f := newFixtureWith(t, nil, func(o *Options) { o.Replication.LeaderQuota = q })
	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0,
		Leader: metadata.NoLeaderChange, Replicas: []int32{1, 2}, ISR: []int32{1}})
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: batch(t, 3, testStart.UnixMilli())})
	done := make(chan []FetchPartitionResult, 1)
	go func() {
		done <- f.rm.Fetch(t.Context(), FetchParams{ReplicaID: 2, ReplicaEpoch: -1, MaxWait: time.Second, MaxBytes: 1 << 20, MinBytes: 1},
			[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	}()
	select {
	case <-done:
		t.Fatal("the throttled fetch answered before MaxWait")
	case <-time.After(50 * time.Millisecond):
	}
	for f.clk.Waiters() == 0 {
		time.Sleep(time.Millisecond)
	}
	f.clk.Advance(time.Second)
	if res := <-done; res[0].Records.Size != 0 {
		t.Fatalf("throttled fetch returned %d bytes", res[0].Records.Size)
	}
}

// TestFollowerThrottle follows ReplicaFetcherThread.buildFetch: a
// throttled partition is left out of the fetch while the follower quota is
// exceeded, unless its last fetch reached the leader's high watermark.
func TestFollowerThrottle(t *testing.T) {
	q := &fakeQuota{throttled: map[kafka.TopicPartition]bool{tp("c", 0): true}, exceeded: true}
	f := newFixtureWith(t, nil, func(o *Options) { o.Replication.FollowerQuota = q })
	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(2), Partition: 0, Leader: 3,
		Replicas: []int32{3, 1}, ISR: []int32{3, 1}})
	f.applyChange(t, &metadata.PartitionChangeRecord{TopicID: replicationtest.TopicID(1), Partition: 0, Leader: 3,
		Replicas: []int32{3, 1}, ISR: []int32{3, 1}})
	r := f.rm.replicas
	fetched := func() []kafka.TopicPartition {
		var out []kafka.TopicPartition
		for i := range r.numFetchers.Load() {
			for _, pos := range r.positions(fetcherKey{leader: 3, index: int(i)}, map[kafka.TopicPartition]time.Time{}, activeQuota(q)) {
				out = append(out, pos.tp)
			}
		}
		return out
	}
	if got := fetched(); len(got) != 1 || got[0] != tp("t", 0) {
		t.Fatalf("fetching %v while exceeded, want only the unthrottled t-0", got)
	}
	q.set(false)
	if got := fetched(); len(got) != 2 {
		t.Fatalf("fetching %v under the quota, want both", got)
	}
	q.set(true)
	p, err := f.rm.Partition(tp("c", 0))
	if err != nil {
		t.Fatal(err)
	}
	pos, _ := p.followerPosition()
	b := batch(t, 2, testStart.UnixMilli())
	if err := p.appendAsFollower(pos.leaderEpoch, b, 2, 0); err != nil {
		t.Fatal(err)
	}
	if got := fetched(); len(got) != 2 {
		t.Fatalf("fetching %v once c-0 reached the leader's high watermark, want both", got)
	}
	if err := p.appendAsFollower(pos.leaderEpoch, nil, 10, 0); err != nil {
		t.Fatal(err)
	}
	if got := fetched(); len(got) != 1 {
		t.Fatalf("fetching %v once c-0 fell behind again, want only t-0", got)
	}
}

// TestFetcherIDAsKafka checks AbstractFetcherManager.getFetcherId's
// values: Utils.abs(31 * topic.hashCode + partition) % n.
func TestFetcherIDAsKafka(t *testing.T) {
	cases := []struct {
		topic string
		part  int32
		n     int
		want  int
	}{
		{"t", 1, 3, (31*116 + 1) % 3},
		// "orders".hashCode() = -1008770331; 31 * it overflows int32.
		{"orders", 0, 4, 1},
		{"é", 2, 5, (31*233 + 2) % 5},
	}
	for _, c := range cases {
		if got := fetcherID(kafka.TopicPartition{Topic: c.topic, Partition: c.part}, c.n); got != c.want {
			t.Errorf("%s-%d of %d: fetcher %d, want %d", c.topic, c.part, c.n, got, c.want)
		}
	}
}

// idleTransport answers every fetch with nothing after a short wait.
type idleTransport struct{}

func (idleTransport) FetchFromLeader(ctx context.Context, _ int32, _ ReplicaFetchRequest) ([]ReplicaFetchResult, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(5 * time.Millisecond):
		return nil, nil
	}
}

func (idleTransport) LeaderLogOffsets(context.Context, int32, int32, kafka.TopicPartition, int32) (int64, int64, error) {
	return 0, 0, errors.New("idle")
}

// TestNumReplicaFetchersResize: num.replica.fetchers changed live spreads
// the followed partitions over the new number of fetchers per leader
// (t-0, t-1 and c-0 on fetchers 0, 1, 1 of 4) and back.
func TestNumReplicaFetchersResize(t *testing.T) {
	f := newFixtureWith(t, nil, func(o *Options) { o.Replication.Transport = idleTransport{} })
	for _, rec := range []*metadata.PartitionChangeRecord{
		{TopicID: replicationtest.TopicID(1), Partition: 0, Leader: 3, Replicas: []int32{3, 1}, ISR: []int32{3, 1}},
		{TopicID: replicationtest.TopicID(1), Partition: 1, Leader: 3, Replicas: []int32{3, 1}, ISR: []int32{3, 1}},
		{TopicID: replicationtest.TopicID(2), Partition: 0, Leader: 3, Replicas: []int32{3, 1}, ISR: []int32{3, 1}},
	} {
		f.applyChange(t, rec)
	}
	if got := f.rm.FetcherCount(); got != 1 {
		t.Fatalf("%d fetchers with num.replica.fetchers=1, want 1", got)
	}
	f.rm.SetNumReplicaFetchers(4)
	if got := f.rm.FetcherCount(); got != 2 || f.rm.NumReplicaFetchers() != 4 {
		t.Fatalf("%d fetchers with num.replica.fetchers=4, want 2", got)
	}
	f.rm.SetNumReplicaFetchers(1)
	if got := f.rm.FetcherCount(); got != 1 {
		t.Fatalf("%d fetchers back at num.replica.fetchers=1, want 1", got)
	}
}
