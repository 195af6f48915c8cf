package main

import (
	"math"
	"os"
	"strings"
	"testing"
)

func TestParseWindow(t *testing.T) {
	w, ok := parseWindow("35355 records sent, 35249.3 records/sec (34.42 MB/sec), 812.9 ms avg latency, 970.0 ms max latency.")
	if !ok {
		t.Fatal("window line not recognised")
	}
	if w.Records != 35355 || w.RecordsPerSec != 35249.3 || w.AvgLatencyMs != 812.9 || w.MaxLatencyMs != 970 {
		t.Fatalf("parsed %+v", w)
	}
	for _, line := range []string{
		"In steady state.",
		"200000 records sent, 30859.435272 records/sec (30.14 MB/sec), 707.06 ms avg latency, 1098.00 ms max latency, 705 ms 50th, 1027 ms 95th, 1072 ms 99th, 1094 ms 99.9th.",
		"",
	} {
		if _, ok := parseWindow(line); ok {
			t.Errorf("%q taken for a window", line)
		}
	}
}

func TestParseSummary(t *testing.T) {
	all, ok := parseSummary("200000 records sent, 30859.435272 records/sec (30.14 MB/sec), 707.06 ms avg latency, 1098.00 ms max latency, 705 ms 50th, 1027 ms 95th, 1072 ms 99th, 1094 ms 99.9th.")
	if !ok || all.SteadyState {
		t.Fatalf("whole-run summary: ok=%v %+v", ok, all)
	}
	want := perfSummary{Records: 200000, RecordsPerSec: 30859.435272, AvgLatencyMs: 707.06, MaxLatencyMs: 1098, P50Ms: 705, P95Ms: 1027, P99Ms: 1072, P999Ms: 1094}
	if all != want {
		t.Fatalf("got %+v, want %+v", all, want)
	}
	steady, ok := parseSummary("150000 steady state records sent, 38910.505837 records/sec (38.00 MB/sec), 641.11 ms avg latency, 970.00 ms max latency, 652 ms 50th, 902 ms 95th, 963 ms 99th, 969 ms 99.9th.")
	if !ok || !steady.SteadyState || steady.P99Ms != 963 || steady.Records != 150000 {
		t.Fatalf("steady-state summary: ok=%v %+v", ok, steady)
	}
	if _, ok := parseSummary("35355 records sent, 35249.3 records/sec (34.42 MB/sec), 812.9 ms avg latency, 970.0 ms max latency."); ok {
		t.Fatal("a window line taken for a summary")
	}
}

func TestFoldWindowsUsesWindowDurations(t *testing.T) {
	// 1000 records in 1 s and 3000 records in 2 s: 4000 records in 3 s.
	st, err := foldWindows([]perfWindow{
		{Records: 1000, RecordsPerSec: 1000, AvgLatencyMs: 10, MaxLatencyMs: 50},
		{Records: 3000, RecordsPerSec: 1500, AvgLatencyMs: 30, MaxLatencyMs: 40},
	})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(st.RecordsPerSec-4000.0/3) > 1e-9 || st.Records != 4000 || st.MaxLatencyMs != 50 {
		t.Fatalf("got %+v", st)
	}
	if math.Abs(st.AvgLatencyMs-25) > 1e-9 {
		t.Fatalf("record-weighted latency %v, want 25", st.AvgLatencyMs)
	}
	if _, err := foldWindows([]perfWindow{{Records: 0, RecordsPerSec: 0}}); err == nil {
		t.Fatal("an empty window (a stalled broker) must fail the run")
	}
	if _, err := foldWindows(nil); err == nil {
		t.Fatal("no windows must fail")
	}
}

func TestScanWindowsStopsAfterMeasurement(t *testing.T) {
	var lines []string
	for i := 1; i <= 10; i++ {
		lines = append(lines, "1000 records sent, 1000.0 records/sec (0.98 MB/sec), 5.0 ms avg latency, 9.0 ms max latency.")
		lines = append(lines, "some warning")
	}
	// Our own pid stands in for the broker: scanWindows only reads its CPU time.
	run, err := scanWindows(strings.NewReader(strings.Join(lines, "\n")), []int{os.Getpid()}, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if run.Stats.Records != 3000 || run.CPUSeconds < 0 {
		t.Fatalf("got %+v", run)
	}
	if _, err := scanWindows(strings.NewReader(strings.Join(lines[:6], "\n")), []int{os.Getpid()}, 2, 3); err == nil {
		t.Fatal("a tool that ends early must fail the run")
	}
}

func TestParseConsumerPerf(t *testing.T) {
	out := `start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
2026-11-30 02:40:01:123, 2026-11-30 02:40:05:456, 256.0000, 59.0800, 262144, 60500.5000, 312, 4021, 63.6657, 65194.7277
`
	r, err := parseConsumerPerf(out)
	if err != nil {
		t.Fatal(err)
	}
	if r.Records != 262144 || r.FetchTimeMs != 4021 || r.RebalanceMs != 312 {
		t.Fatalf("got %+v", r)
	}
	if _, err := parseConsumerPerf("WARN something\n"); err == nil {
		t.Fatal("output without a result line must fail")
	}
}

func TestProcParsers(t *testing.T) {
	stat := []byte("1234 (java (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 50 0 12345 0 0")
	cpu, err := parseStatCPU(stat)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(cpu-3.25) > 1e-9 {
		t.Fatalf("cpu %v, want 3.25 (325 ticks)", cpu)
	}
	if _, err := parseStatCPU([]byte("garbage")); err == nil {
		t.Fatal("a stat line without ')' must fail")
	}
	if _, err := parseStatCPU([]byte("1 (x) S 1 2")); err == nil {
		t.Fatal("a short stat line must fail")
	}
	rss, err := parseVmHWM(strings.NewReader("Name:\tjava\nVmPeak:\t 5000 kB\nVmHWM:\t  421888 kB\nVmRSS:\t 1 kB\n"))
	if err != nil {
		t.Fatal(err)
	}
	if rss != 421888*1024 {
		t.Fatalf("VmHWM %d", rss)
	}
	if _, err := parseVmHWM(strings.NewReader("Name:\tx\n")); err == nil {
		t.Fatal("status without VmHWM must fail")
	}
}

func TestMedianAndRatio(t *testing.T) {
	if m, _ := medianOf([]float64{3, 1, 2}); m != 2 {
		t.Fatalf("median %v", m)
	}
	if m, _ := medianOf([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Fatalf("even median %v", m)
	}
	if _, ok := medianOf(nil); ok {
		t.Fatal("median of nothing")
	}
	if got := summary([]float64{10, 30, 20}, "%.0f"); got != "20 (10–30)" {
		t.Fatalf("summary %q", got)
	}
	if got := ratio(1, 0, true, true); got != "n/a" {
		t.Fatalf("ratio by zero %q", got)
	}
	if got := ratio(3, 2, true, true); got != "1.50" {
		t.Fatalf("ratio %q", got)
	}
}

func TestParseStorageReport(t *testing.T) {
	report := `# Storage benchmarks

## Summary

| Sluice figure | Sluice | machine figure (same run, same file system) | machine | ratio |
|---|---:|---|---:|---:|
| Append | 400 MB/s | buffered write, no fsync, 1 MiB writes | 2216 (1859-2753) MB/s | 0.18 |
| (same) | | buffered write, no fsync, 16 KiB writes | 616 MB/s | 0.65 |
| Read | 1854 MB/s | page-cache read of a 2048 MiB file, 1 MiB reads | 1322 MB/s | 1.40 |
| none yet | | write + fdatasync every 1 MiB | 197 MB/s; fdatasync mean 2.71 ms | |

## Machine figures

    $ fio --name=x
`
	rows, section := parseStorageReport(report)
	if len(rows) != 4 || rows[0][1] != "2216 (1859-2753) MB/s" || rows[3][0] != "write + fdatasync every 1 MiB" {
		t.Fatalf("rows %q", rows)
	}
	if section != "    $ fio --name=x" {
		t.Fatalf("section %q", section)
	}
}
