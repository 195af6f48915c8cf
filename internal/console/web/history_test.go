package web

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func TestHistoryRingAndRates(t *testing.T) {
	h := newHistory(3)
	t0 := time.Unix(1000, 0)
	for i, v := range []float64{0, 100, 300, 50, 150} { // 50: a restart resets the counter
		h.add(sample{at: t0.Add(time.Duration(i) * 10 * time.Second), bytesIn: v})
	}
	ss := h.samples()
	if len(ss) != 3 || ss[0].bytesIn != 300 || ss[2].bytesIn != 150 {
		t.Fatalf("ring %+v", ss)
	}
	r := rates(ss, func(s sample) float64 { return s.bytesIn })
	if len(r) != 1 || r[0].v != 10 {
		t.Fatalf("rates %+v, want one point of 10/s after the reset", r)
	}
}

// The sampler reads the aggregate BrokerTopicMetrics series (no topic
// label), the per-topic ones and the lag sums by group.
func TestReadSample(t *testing.T) {
	reg := prometheus.NewRegistry()
	bytesIn := prometheus.NewCounterVec(prometheus.CounterOpts{Name: metricBytesIn}, []string{"topic"})
	lag := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: metricLagSum}, []string{"consumergroup", "topic"})
	total := prometheus.NewCounter(prometheus.CounterOpts{Name: metricMessagesIn})
	reg.MustRegister(bytesIn, lag, total)
	bytesIn.WithLabelValues("a").Add(5)
	total.Add(9)
	lag.WithLabelValues("g", "a").Set(3)
	lag.WithLabelValues("g", "b").Set(4)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := readSample(time.Unix(0, 0), mfs)
	if s.bytesIn != -1 || s.messages != 9 || s.lag["g"] != 7 {
		t.Fatalf("sample %+v", s)
	}
	if tc := readTopicCounters(mfs); tc["a"].bytesIn != 5 {
		t.Fatalf("topic counters %+v", tc)
	}
}

func TestChartEscapesAndBounds(t *testing.T) {
	t0 := time.Unix(0, 0)
	svg := string(chart("c<1>", []series{{name: `<script>"x"`, points: []point{{t0, 1}, {t0.Add(time.Second), 3}}}}, humanRate))
	if strings.Contains(svg, "<script>") || !strings.Contains(svg, "&lt;script&gt;") || !strings.Contains(svg, "<polyline") {
		t.Fatalf("chart %s", svg)
	}
	if empty := string(chart("e", nil, humanRate)); !strings.Contains(empty, "not enough samples") {
		t.Fatalf("empty chart %s", empty)
	}
}

func TestTopicRates(t *testing.T) {
	var tr topicRates
	t0 := time.Unix(100, 0)
	if _, ok := tr.rate("a"); ok {
		t.Fatal("a rate before any reading")
	}
	tr.add(t0, map[string]topicCounters{"a": {bytesIn: 100, messages: 1}, "b": {bytesIn: 50}})
	tr.add(t0.Add(10*time.Second), map[string]topicCounters{"a": {bytesIn: 600, bytesOut: 20, messages: 11}, "b": {bytesIn: 10}})
	r, ok := tr.rate("a")
	if !ok || r.bytesIn != 50 || r.bytesOut != 2 || r.messages != 1 {
		t.Fatalf("rate of a: %+v %v", r, ok)
	}
	if _, ok := tr.rate("b"); ok {
		t.Fatal("a rate across a counter reset")
	}
}
