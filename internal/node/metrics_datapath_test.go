package node

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
)

// batchBytes sums the record batches a producer wrote, as kgo reports
// them: the records' bytes plus the v2 batch header it leaves out.
type batchBytes struct {
	mu      sync.Mutex
	bytes   int
	records int
}

// recordBatchOverhead is a v2 record batch's header before its records.
const recordBatchOverhead = 61

func (b *batchBytes) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.bytes += m.CompressedBytes + recordBatchOverhead
	b.records += m.NumRecords
}

// seriesValue gathers g and returns the value of name with exactly labels.
func seriesValue(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.Metric {
			if len(m.Label) != len(labels) {
				continue
			}
			for _, l := range m.Label {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			if m.Counter != nil {
				return m.Counter.GetValue(), true
			}
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

func TestDataPathMetricsCountProducedAndFetchedBytes(t *testing.T) {
	n, addr, _ := startNode(t, t.TempDir())
	reg, ok := n.metrics.(prometheus.Gatherer)
	if !ok {
		t.Fatalf("the node's registry %T cannot be gathered", n.metrics)
	}
	adm, _ := newAdmin(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "metered"); err != nil {
		t.Fatal(err)
	}
	written := &batchBytes{}
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic("metered"), kgo.WithHooks(written),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	const n1 = 200
	for i := range n1 {
		prod.Produce(ctx, &kgo.Record{Key: []byte{byte(i)}, Value: make([]byte, 100+i)}, nil)
		if i%50 == 49 {
			if err := prod.Flush(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	// kgo calls OnProduceBatchWritten after it has finished the batch's
	// promises, so Flush can return before the last call: wait for it.
	var sent, records int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		written.mu.Lock()
		sent, records = written.bytes, written.records
		written.mu.Unlock()
		if records >= n1 || time.Now().After(deadline) {
			break
		}
	}
	if records != n1 {
		t.Fatalf("kgo reports %d records written, want %d", records, n1)
	}
	topic := map[string]string{"topic": "metered"}
	for name, want := range map[string]float64{
		"kafka_server_brokertopicmetrics_bytesin_total":    float64(sent),
		"kafka_server_brokertopicmetrics_messagesin_total": n1,
	} {
		if got, ok := seriesValue(t, reg, name, topic); !ok || got != want {
			t.Errorf("%s{topic=metered} = %v (present %v), want %v", name, got, ok, want)
		}
	}
	if got, _ := seriesValue(t, reg, "kafka_log_log_size", map[string]string{"topic": "metered", "partition": "0"}); got != float64(sent) {
		t.Errorf("kafka_log_log_size{metered-0} = %v, want the %d bytes written", got, sent)
	}
	if got, _ := seriesValue(t, reg, "kafka_server_brokertopicmetrics_bytesin_total", nil); got < float64(sent) {
		t.Errorf("aggregate bytes in %v below the topic's %d", got, sent)
	}

	// Consuming everything once moves bytes out by the same bytes.
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("metered"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	for got := 0; got < n1; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got += fs.NumRecords()
	}
	if got, _ := seriesValue(t, reg, "kafka_server_brokertopicmetrics_bytesout_total", topic); got != float64(sent) {
		t.Errorf("bytes out {topic=metered} = %v after one full read, want %d", got, sent)
	}
	if got, _ := seriesValue(t, reg, "kafka_server_replicamanager_leadercount", nil); got < 1 {
		t.Errorf("leader count %v", got)
	}
}
