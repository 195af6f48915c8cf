package commitlog

import (
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

func TestLogCollectorReadsEachLog(t *testing.T) {
	clk := clock.NewManual(testStart)
	m := newTestManager(t, newDurableMem(t), clk, "/data/a")
	defer m.Close()
	l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "x", Partition: 3}, kafka.UUID{1}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var size int
	for range 5 {
		b := makeBatch(batchSpec{records: 2, valueSize: 100})
		size += len(b)
		if _, err := l.Append(b, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.GetOrCreate(kafka.TopicPartition{Topic: "y", Partition: 0}, kafka.UUID{2}, testOptions()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewLogCollector(m))
	for _, w := range []struct {
		name, topic string
		want        float64
	}{
		{"kafka_log_log_logendoffset", "x", 10}, {"kafka_log_log_numlogsegments", "x", 2},
		{"kafka_log_log_size", "x", float64(size)}, {"kafka_log_log_logstartoffset", "x", 0},
		{"kafka_log_log_logendoffset", "y", 0}, {"kafka_log_log_numlogsegments", "y", 1}, {"kafka_log_log_size", "y", 0},
	} {
		if got := gatheredValue(t, reg, w.name, w.topic); got != w.want {
			t.Errorf("%s{topic=%q} = %v, want %v", w.name, w.topic, got, w.want)
		}
	}
	// The log start offset follows DeleteRecords-style moves.
	if err := l.IncrementLogStartOffset(4); err != nil {
		t.Fatal(err)
	}
	if got := gatheredValue(t, reg, "kafka_log_log_logstartoffset", "x"); got != 4 {
		t.Fatalf("log start offset %v, want 4", got)
	}
}

func gatheredValue(t *testing.T, g prometheus.Gatherer, name, topic string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			for _, l := range m.Label {
				if l.GetName() == "topic" && l.GetValue() == topic {
					return m.Gauge.GetValue()
				}
			}
		}
	}
	t.Fatalf("no %s{topic=%q}", name, topic)
	return 0
}

// BenchmarkLogCollector10k measures a scrape of 10,000 partition logs
// (time and allocations per scrape):
//
//	go test -run '^$' -bench LogCollector10k -benchmem ./internal/commitlog
func BenchmarkLogCollector10k(b *testing.B) {
	o := DefaultManagerOptions("/data/a")
	o.Defaults = testOptions()
	m, err := NewManager(vfs.NewMem(), o, clock.NewManual(testStart), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	for i := range 10_000 {
		tp := kafka.TopicPartition{Topic: "t" + strconv.Itoa(i/100), Partition: int32(i % 100)}
		if _, err := m.GetOrCreate(tp, kafka.UUID{byte(i / 100), 1}, testOptions()); err != nil {
			b.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewLogCollector(m))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
