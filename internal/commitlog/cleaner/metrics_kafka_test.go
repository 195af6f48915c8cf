package cleaner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// kafkaGauges gathers reg and returns each series' value by name, with
// its logdirectory label when it has one ("name{dir}").
func kafkaGauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range families {
		for _, m := range mf.Metric {
			name := mf.GetName()
			for _, l := range m.Label {
				name += "{" + l.GetValue() + "}"
			}
			out[name] = m.Gauge.GetValue()
		}
	}
	return out
}

func TestKafkaCollectorFollowsCleans(t *testing.T) {
	mem := durableMem(t)
	efs := vfs.NewErrorFS(mem, nil)
	clk := clock.NewManual(testStart)
	l := openLog(t, efs, clk, compactOptions(), false)
	fillLog(t, l, clk, records.NoCompression, 12, 10, 3)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	src := &logSource{logs: []*commitlog.Log{l}}
	c := newCleaner(t, efs, src, clk)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewKafkaCollector(c, []string{"/data", "/other"}))
	clk.Advance(3 * time.Second)
	if got := kafkaGauges(t, reg)["kafka_log_logcleanermanager_time_since_last_run_ms"]; got != 3000 {
		t.Fatalf("time since last run %v ms before any pass, want 3000 (since the cleaner was made)", got)
	}

	// A failed clean makes the partition uncleanable in its log dir.
	efs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, path string, _ int) error {
		if op == vfs.OpRename && strings.HasSuffix(path, ".log.swap") {
			return fmt.Errorf("injected failure of %s %s", op, path)
		}
		return nil
	}))
	if _, err := c.CleanOnce(t.Context()); err == nil {
		t.Fatal("clean with a failing rename succeeded")
	}
	efs.SetInjector(nil)
	got := kafkaGauges(t, reg)
	if got["kafka_log_logcleanermanager_uncleanable_partitions_count{/data}"] != 1 || got["kafka_log_logcleanermanager_uncleanable_bytes{/data}"] <= 0 {
		t.Fatalf("after a failed clean: uncleanable %v partitions, %v bytes in /data; want 1 and some",
			got["kafka_log_logcleanermanager_uncleanable_partitions_count{/data}"], got["kafka_log_logcleanermanager_uncleanable_bytes{/data}"])
	}
	if v, ok := got["kafka_log_logcleanermanager_uncleanable_partitions_count{/other}"]; !ok || v != 0 {
		t.Fatalf("log dir /other: %v (present %v), want 0", v, ok)
	}
	if got["kafka_log_logcleanermanager_max_dirty_percent"] != 100 || got["kafka_log_logcleanermanager_time_since_last_run_ms"] != 0 {
		t.Fatalf("max dirty %v%%, since last run %v ms; want 100 (nothing cleaned yet) and 0",
			got["kafka_log_logcleanermanager_max_dirty_percent"], got["kafka_log_logcleanermanager_time_since_last_run_ms"])
	}

	// Recovered and cleaned: no longer uncleanable, the clean's figures.
	mem.Crash()
	l = openLog(t, efs, clk, compactOptions(), false)
	defer l.Close()
	src.set(l)
	clk.Advance(time.Second)
	if !cleanOnce(t, c) {
		t.Fatal("the recovered log was not cleaned")
	}
	got = kafkaGauges(t, reg)
	if got["kafka_log_logcleanermanager_uncleanable_partitions_count{/data}"] != 0 {
		t.Fatal("the cleaned partition is still uncleanable")
	}
	if r := got["kafka_log_logcleaner_cleaner_recopy_percent"]; r <= 0 || r >= 100 {
		t.Fatalf("recopy %v%%, want between 0 and 100 (12 keys kept of 120 records)", r)
	}
	if u := got["kafka_log_logcleaner_max_buffer_utilization_percent"]; u <= 0 || u > 100 {
		t.Fatalf("buffer utilization %v%%", u)
	}
	if got["kafka_log_logcleaner_deadthreadcount"] != 0 || got["kafka_log_logcleaner_max_clean_time_secs"] < 0 {
		t.Fatalf("dead threads %v, clean time %v", got["kafka_log_logcleaner_deadthreadcount"], got["kafka_log_logcleaner_max_clean_time_secs"])
	}
}

func TestCompactionDelayIsPastMaxLag(t *testing.T) {
	now := testStart
	opts := commitlog.Options{MaxCompactionLag: time.Minute}
	st := commitlog.CleanState{Segments: []commitlog.CleanSegment{
		{BaseOffset: 0, NextOffset: 10, FirstBatchTimestamp: now.Add(-time.Hour).UnixMilli()},
		{BaseOffset: 10, NextOffset: 20, FirstBatchTimestamp: now.Add(-5 * time.Minute).UnixMilli()},
	}}
	if d := compactionDelay(st, opts, 10, now); d != 4*time.Minute {
		t.Fatalf("delay %v, want 4m (dirty since 5m, lag 1m)", d)
	}
	if d := compactionDelay(st, opts, 20, now); d != 0 {
		t.Fatalf("delay %v with nothing dirty, want 0", d)
	}
	opts.MaxCompactionLag = time.Hour * 2
	if d := compactionDelay(st, opts, 0, now); d != 0 {
		t.Fatalf("delay %v within the lag, want 0", d)
	}
}
