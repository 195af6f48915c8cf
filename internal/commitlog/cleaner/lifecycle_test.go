package cleaner

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/testutil"
)

func TestThreadsCleanAndStopWithMetrics(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	l := openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	m := fillLog(t, l, clk, records.NoCompression, 10, 12, 2)
	reg := prometheus.NewRegistry()
	opts := testCleanerOptions()
	opts.Threads = 2
	c, err := New(fs, &logSource{logs: []*commitlog.Log{l}}, opts, clk, reg, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Start(context.Background())
	c.Start(context.Background()) // a second Start does nothing
	testutil.Eventually(t, 20*time.Second, func() bool { return metricValue(t, c.metrics.runs) >= 1 }, "the cleaner threads clean the dirty log")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if got := checkAgainstModel(t, l, m); len(got) != 10 {
		t.Fatalf("%d records, want 10", len(got))
	}
	if metricValue(t, c.metrics.bytesRead) <= 0 || metricValue(t, c.metrics.bytesWritten) <= 0 {
		t.Fatal("bytes read and written not counted")
	}
	if cleanOnce(t, c) { // a pass after the clean refreshes the gauge
		t.Fatal("clean log cleaned again")
	}
	ratio := metricValue(t, c.metrics.dirtyRatio.WithLabelValues(testTP.Topic, "0"))
	if ratio != 0 {
		t.Fatalf("dirty ratio gauge %v, want 0 once a pass after the clean found it clean", ratio)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, n := range []string{"sluice_log_cleaner_runs_total", "sluice_log_cleaner_clean_seconds", "sluice_log_cleaner_dirty_ratio", "sluice_log_cleaner_read_bytes_total"} {
		if !names[n] {
			t.Fatalf("%s not registered: %v", n, names)
		}
	}
}

func TestOffsetMapFillsAtLoadFactor(t *testing.T) {
	m := newOffsetMap(100*offsetSlotSize, 0.5) // 64 slots, 32 keys
	for i := range 32 {
		if !m.put([]byte(key(i)), int64(i)) {
			t.Fatalf("key %d refused before the map is full", i)
		}
	}
	if !m.full() || m.put([]byte("one more"), 99) {
		t.Fatal("a full map took a new key")
	}
	if !m.put([]byte(key(3)), 100) || m.get([]byte(key(3))) != 100 {
		t.Fatal("a full map must still update a key it holds")
	}
	if m.get([]byte("absent")) != -1 || m.get([]byte(key(31))) != 31 {
		t.Fatal("lookups wrong")
	}
	m.clear()
	if m.get([]byte(key(3))) != -1 || m.full() {
		t.Fatal("clear left keys")
	}
}

// metricValue reads a counter or gauge.
func metricValue(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	c.Collect(ch)
	var m dto.Metric
	if err := (<-ch).Write(&m); err != nil {
		t.Fatal(err)
	}
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}
