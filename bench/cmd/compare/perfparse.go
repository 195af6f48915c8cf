package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/bench/internal/perftest"
)

// Lines printed by Kafka's ProducerPerformance (4.x). A progress window:
//
//	35355 records sent, 35249.3 records/sec (34.42 MB/sec), 812.9 ms avg latency, 970.0 ms max latency.
//
// the final summary (and, with --warmup-records, a second one for the steady state):
//
//	200000 records sent, 30859.435272 records/sec (30.14 MB/sec), 707.06 ms avg latency, 1098.00 ms max latency, 705 ms 50th, 1027 ms 95th, 1072 ms 99th, 1094 ms 99.9th.
//	150000 steady state records sent, 38910.505837 records/sec (38.00 MB/sec), ...
var (
	summaryLine = regexp.MustCompile(`^(\d+) (steady state )?records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$`)
)

// perfWindow is one progress line of producer-perf-test.
type perfWindow = perftest.Window

// parseWindow parses a progress line; ok is false for any other line.
func parseWindow(line string) (perfWindow, bool) { return perftest.ParseWindow(line) }

// perfSummary is the final line of producer-perf-test (whole run or steady state).
type perfSummary struct {
	SteadyState   bool
	Records       int64
	RecordsPerSec float64
	AvgLatencyMs  float64
	MaxLatencyMs  float64
	P50Ms         float64
	P95Ms         float64
	P99Ms         float64
	P999Ms        float64
}

func parseSummary(line string) (perfSummary, bool) {
	m := summaryLine.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return perfSummary{}, false
	}
	s := perfSummary{SteadyState: m[2] != ""}
	ints := []*float64{&s.P50Ms, &s.P95Ms, &s.P99Ms, &s.P999Ms}
	var err error
	if s.Records, err = strconv.ParseInt(m[1], 10, 64); err != nil {
		return perfSummary{}, false
	}
	floats := []*float64{&s.RecordsPerSec, nil, &s.AvgLatencyMs, &s.MaxLatencyMs}
	for i, dst := range floats {
		if dst == nil {
			continue
		}
		if *dst, err = strconv.ParseFloat(m[3+i], 64); err != nil {
			return perfSummary{}, false
		}
	}
	for i, dst := range ints {
		if *dst, err = strconv.ParseFloat(m[7+i], 64); err != nil {
			return perfSummary{}, false
		}
	}
	return s, true
}

// windowStats folds measurement windows into one throughput and latency figure. Each
// window's length is its record count over its rate (the tool's own clock), so a late
// line does not stretch the measurement.
type windowStats struct {
	Records       int64
	Seconds       float64
	RecordsPerSec float64
	AvgLatencyMs  float64 // record-weighted mean of the windows' averages
	MaxLatencyMs  float64
}

func foldWindows(ws []perfWindow) (windowStats, error) {
	var st windowStats
	var latencySum float64
	for _, w := range ws {
		if w.Records == 0 || w.RecordsPerSec <= 0 {
			return windowStats{}, fmt.Errorf("a measurement window sent no records (broker stalled)")
		}
		st.Records += w.Records
		st.Seconds += float64(w.Records) / w.RecordsPerSec
		latencySum += w.AvgLatencyMs * float64(w.Records)
		st.MaxLatencyMs = max(st.MaxLatencyMs, w.MaxLatencyMs)
	}
	if st.Records == 0 {
		return windowStats{}, fmt.Errorf("no measurement windows")
	}
	st.RecordsPerSec = float64(st.Records) / st.Seconds
	st.AvgLatencyMs = latencySum / float64(st.Records)
	return st, nil
}

// consumerPerfResult is the data line of ConsumerPerformance (4.x), printed under the
// header
//
//	start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
type consumerPerfResult struct {
	Records     int64
	FetchTimeMs float64
	RebalanceMs float64
}

func parseConsumerPerf(out string) (consumerPerfResult, error) {
	lines := strings.Split(out, "\n")
	for i, line := range lines {
		if !strings.HasPrefix(strings.TrimSpace(line), "start.time,") {
			continue
		}
		header := splitCSV(line)
		for _, data := range lines[i+1:] {
			fields := splitCSV(data)
			if len(fields) != len(header) {
				continue
			}
			col := func(name string) (float64, error) {
				for j, h := range header {
					if h == name {
						return strconv.ParseFloat(fields[j], 64)
					}
				}
				return 0, fmt.Errorf("no column %q", name)
			}
			var r consumerPerfResult
			n, err := col("data.consumed.in.nMsg")
			if err != nil {
				return r, fmt.Errorf("consumer-perf-test output: %w", err)
			}
			r.Records = int64(n)
			if r.FetchTimeMs, err = col("fetch.time.ms"); err != nil {
				return r, fmt.Errorf("consumer-perf-test output: %w", err)
			}
			if r.RebalanceMs, err = col("rebalance.time.ms"); err != nil {
				return r, fmt.Errorf("consumer-perf-test output: %w", err)
			}
			return r, nil
		}
	}
	return consumerPerfResult{}, fmt.Errorf("no result line in consumer-perf-test output %q", truncate(out, 300))
}

func splitCSV(line string) []string {
	parts := strings.Split(line, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}
