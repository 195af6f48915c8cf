// Package perftest reads the output of Kafka's producer-perf-test, shared by
// bench/cmd/compare and bench/ops/tail-timeline.
package perftest

import (
	"regexp"
	"strconv"
	"strings"
)

// windowLine is a progress window of Kafka's ProducerPerformance (4.x):
//
//	35355 records sent, 35249.3 records/sec (34.42 MB/sec), 812.9 ms avg latency, 970.0 ms max latency.
//
// The summaries go on with percentiles after the max latency and do not match.
var windowLine = regexp.MustCompile(`^(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, ([\d.]+) ms max latency\.$`)

// Window is one progress line of producer-perf-test.
type Window struct {
	Records       int64
	RecordsPerSec float64
	AvgLatencyMs  float64
	MaxLatencyMs  float64
}

// ParseWindow parses a progress line; ok is false for any other line.
func ParseWindow(line string) (w Window, ok bool) {
	m := windowLine.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return Window{}, false
	}
	var err error
	if w.Records, err = strconv.ParseInt(m[1], 10, 64); err != nil {
		return Window{}, false
	}
	if w.RecordsPerSec, err = strconv.ParseFloat(m[2], 64); err != nil {
		return Window{}, false
	}
	if w.AvgLatencyMs, err = strconv.ParseFloat(m[4], 64); err != nil {
		return Window{}, false
	}
	if w.MaxLatencyMs, err = strconv.ParseFloat(m[5], 64); err != nil {
		return Window{}, false
	}
	return w, true
}
