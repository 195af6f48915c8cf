package replication

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication/replicationtest"
	"github.com/sluice-io/sluice/internal/testutil"
)

// scrape gathers c through a registry, as a scrape would, and returns the
// values by name and label pairs ("name" or "name{k=v,...}").
func scrape(t *testing.T, c prometheus.Collector) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, mf := range families {
		for _, m := range mf.Metric {
			out[seriesKey(mf.GetName(), m)] = metricValue(m)
		}
	}
	return out
}

func seriesKey(name string, m *dto.Metric) string {
	if len(m.Label) == 0 {
		return name
	}
	key := name + "{"
	for i, l := range m.Label {
		if i > 0 {
			key += ","
		}
		key += l.GetName() + "=" + l.GetValue()
	}
	return key + "}"
}

func metricValue(m *dto.Metric) float64 {
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

func wantSeries(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("series %s missing", k)
			continue
		}
		if g != v {
			t.Errorf("%s = %v, want %v", k, g, v)
		}
	}
}

func TestBrokerTopicMetricsCountProduceAndFetch(t *testing.T) {
	f := newFixture(t, nil)
	b := batch(t, 10, testStart.UnixMilli())
	if res := f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: b}); res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	// A batch above max.message.bytes is rejected bytes, not a failure.
	f.setTopicConfig("t", func() TopicConfig { c := DefaultTopicConfig(); c.MaxMessageBytes = 100; return c }())
	big := batch(t, 20, testStart.UnixMilli())
	if res := f.produce(t, 1, AppendPartition{TP: tp("t", 1), Records: big}); res[0].Err == nil {
		t.Fatal("a batch above max.message.bytes was appended")
	}
	// A produce to a hosted topic's partition this broker does not have
	// is counted in the total only (NOT_LEADER/UNKNOWN are expected).
	f.produce(t, 1, AppendPartition{TP: tp("t", 7), Records: b})
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: -1, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	if out[0].Err != nil || out[0].Records.Size != int64(len(b)) {
		t.Fatalf("fetch: %v, %d bytes, want %d", out[0].Err, out[0].Records.Size, len(b))
	}
	if got := scrape(t, NewCollector(f.rm))["kafka_server_brokertopicmetrics_bytesout_total"]; got != 0 {
		t.Fatalf("bytes out %v before the answer is sent, want 0", got)
	}
	CountFetchedBytes(false, out) // the Fetch handler sends the answer
	n, nBig := float64(len(b)), float64(len(big))
	got := scrape(t, NewCollector(f.rm))
	wantSeries(t, got, map[string]float64{
		"kafka_server_brokertopicmetrics_bytesin_total":                        n,
		"kafka_server_brokertopicmetrics_bytesin_total{topic=t}":               n,
		"kafka_server_brokertopicmetrics_messagesin_total{topic=t}":            10,
		"kafka_server_brokertopicmetrics_bytesrejected_total{topic=t}":         nBig,
		"kafka_server_brokertopicmetrics_bytesrejected_total":                  nBig,
		"kafka_server_brokertopicmetrics_failedproducerequests_total{topic=t}": 0,
		"kafka_server_brokertopicmetrics_totalproducerequests_total{topic=t}":  3,
		"kafka_server_brokertopicmetrics_totalproducerequests_total":           3,
		"kafka_server_brokertopicmetrics_bytesout_total{topic=t}":              n,
		"kafka_server_brokertopicmetrics_bytesout_total":                       n,
		"kafka_server_brokertopicmetrics_totalfetchrequests_total{topic=t}":    1,
		"kafka_server_brokertopicmetrics_bytesin_total{topic=c}":               0,
		"kafka_server_brokertopicmetrics_replicationbytesout_total":            0,
	})
}

func TestBrokerTopicMetricsOfDeletedTopicGo(t *testing.T) {
	f := newFixture(t, nil)
	f.produce(t, 1, AppendPartition{TP: tp("c", 0), Records: batch(t, 3, testStart.UnixMilli())})
	if _, ok := scrape(t, NewCollector(f.rm))["kafka_server_brokertopicmetrics_bytesin_total{topic=c}"]; !ok {
		t.Fatal("topic c has no series before its deletion")
	}
	_, image, err := replicationtest.Image(1, replicationtest.Topic{Name: "t", ID: replicationtest.TopicID(1), Partitions: 2, LeaderEpoch: 5})
	if err != nil {
		t.Fatal(err)
	}
	f.rm.ApplyImage(image)
	got := scrape(t, NewCollector(f.rm))
	if _, ok := got["kafka_server_brokertopicmetrics_bytesin_total{topic=c}"]; ok {
		t.Fatal("the deleted topic c still has series")
	}
	if _, ok := got["kafka_server_brokertopicmetrics_bytesin_total{topic=t}"]; !ok {
		t.Fatal("topic t lost its series")
	}
	// The aggregate keeps what the deleted topic counted, as Kafka's does.
	if v := got["kafka_server_brokertopicmetrics_messagesin_total"]; v != 3 {
		t.Fatalf("aggregate messages in %v, want 3", v)
	}
}

func TestReplicaManagerGaugesFollowISR(t *testing.T) {
	f := newFixture(t, nil)
	got := scrape(t, NewCollector(f.rm))
	wantSeries(t, got, map[string]float64{
		"kafka_server_replicamanager_partitioncount":            3,
		"kafka_server_replicamanager_leadercount":               3,
		"kafka_server_replicamanager_underreplicatedpartitions": 0,
		"kafka_server_replicamanager_atminisrpartitioncount":    3,
	})
	p, _ := f.rm.Partition(tp("t", 0))
	// A follower removed from the ISR: under-replicated; with
	// min.insync.replicas 3 under min ISR too.
	f.setTopicConfig("t", func() TopicConfig { c := DefaultTopicConfig(); c.MinInsyncReplicas = 3; return c }())
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 1}); err != nil {
		t.Fatal(err)
	}
	got = scrape(t, NewCollector(f.rm))
	wantSeries(t, got, map[string]float64{
		"kafka_server_replicamanager_underreplicatedpartitions": 1,
		"kafka_server_replicamanager_underminisrpartitioncount": 1,
		// t-1 and c-0: one replica, min.insync.replicas capped at it.
		"kafka_server_replicamanager_atminisrpartitioncount":          2,
		"kafka_server_replicamanager_leadercount":                     3,
		"kafka_server_replicafetchermanager_maxlag{clientid=Replica}": 0,
	})
}

// fakeAlterPartition answers ISR changes with the next partition epoch, or
// with fail's error when set.
type fakeAlterPartition struct {
	fail atomic.Pointer[error]
}

func (a *fakeAlterPartition) AlterPartition(_ context.Context, c ISRChange) (int32, error) {
	if err := a.fail.Load(); err != nil {
		return 0, *err
	}
	return c.PartitionEpoch + 1, nil
}

func TestISRChangeCounters(t *testing.T) {
	sender := &fakeAlterPartition{}
	f := newFixtureWith(t, nil, func(o *Options) { o.Replication.AlterPartition = sender })
	p, _ := f.rm.Partition(tp("t", 0))
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1, LeaderEpoch: 6}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := p.UpdateFollowerFetchState(2, -1, 0); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(31 * time.Second)
	if _, _, err := p.UpdateFollowerFetchState(2, -1, 0); err != nil {
		t.Fatal(err)
	}
	f.rm.ShrinkLaggingISRs() // follower 3 never fetched
	testutil.Eventually(t, 10*time.Second, func() bool {
		s, _, _ := f.rm.ISRChangeCounts()
		return s == 1
	}, "ISR shrink counted")
	// The shrink commits through metadata; then follower 3 catches up and
	// its expansion is counted too.
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 1}); err != nil {
		t.Fatal(err)
	}
	f.rm.Fetch(t.Context(), FetchParams{ReplicaID: 3, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, e, _ := f.rm.ISRChangeCounts()
		return e == 1
	}, "ISR expansion counted")
	// A refused change is a failed ISR update.
	refused := errors.New("controller unavailable")
	sender.fail.Store(&refused)
	if _, err := p.applyState(metadata.PartitionState{Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1, LeaderEpoch: 6, PartitionEpoch: 2}); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(31 * time.Second)
	f.rm.ShrinkLaggingISRs()
	testutil.Eventually(t, 10*time.Second, func() bool {
		_, _, failed := f.rm.ISRChangeCounts()
		return failed >= 1
	}, "failed ISR update counted")
	got := scrape(t, NewCollector(f.rm))
	wantSeries(t, got, map[string]float64{
		"kafka_server_replicamanager_isrshrinks_total": 1,
		"kafka_server_replicamanager_isrexpands_total": 1,
	})
	if got["kafka_server_replicamanager_failedisrupdates_total"] < 1 {
		t.Fatalf("failed ISR updates %v, want at least 1", got["kafka_server_replicamanager_failedisrupdates_total"])
	}
}

func TestReplicationBytesAndFetcherLag(t *testing.T) {
	f := newFixture(t, nil)
	leader, _ := f.rm.Partition(tp("t", 0))
	if _, err := leader.applyState(metadata.PartitionState{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1, LeaderEpoch: 6}); err != nil {
		t.Fatal(err)
	}
	b := batch(t, 10, testStart.UnixMilli())
	f.produce(t, 1, AppendPartition{TP: tp("t", 0), Records: b})
	out := f.rm.Fetch(t.Context(), FetchParams{ReplicaID: 2, MaxBytes: 1 << 20},
		[]FetchPartition{{TP: tp("t", 0), CurrentLeaderEpoch: -1, LastFetchedEpoch: -1, MaxBytes: 1 << 20}})
	if out[0].Err != nil {
		t.Fatal(out[0].Err)
	}
	CountFetchedBytes(true, out)
	// t-1 follows broker 2: a fetched answer of 10 records whose leader
	// is at high watermark 25.
	follower, _ := f.rm.Partition(tp("t", 1))
	if _, err := follower.applyState(metadata.PartitionState{Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 2, LeaderEpoch: 6}); err != nil {
		t.Fatal(err)
	}
	pos, ok := follower.followerPosition()
	if !ok {
		t.Fatal("t-1 has no follower position")
	}
	f.rm.replicas.applyFetched(pos, ReplicaFetchResult{TP: tp("t", 1), HighWatermark: 25, LogStartOffset: 0, Records: b},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	n := float64(len(b))
	wantSeries(t, scrape(t, NewCollector(f.rm)), map[string]float64{
		"kafka_server_brokertopicmetrics_replicationbytesout_total":   n,
		"kafka_server_brokertopicmetrics_replicationbytesin_total":    n,
		"kafka_server_brokertopicmetrics_bytesout_total{topic=t}":     0,
		"kafka_server_brokertopicmetrics_totalfetchrequests_total":    1,
		"kafka_server_replicafetchermanager_maxlag{clientid=Replica}": 15,
	})
}
