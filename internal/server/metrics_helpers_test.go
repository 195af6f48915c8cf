package server

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// findSeries gathers reg and returns the series name{labels} (label
// name, value pairs), or nil.
func findSeries(t *testing.T, reg *prometheus.Registry, name string, labels ...string) *dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			have := make(map[string]string, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metrics
				}
			}
			return m
		}
	}
	return nil
}

// seriesValue is a counter's or gauge's value, or a histogram's count;
// an absent series is 0.
func seriesValue(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	m := findSeries(t, reg, name, labels...)
	switch {
	case m == nil:
		return 0
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	t.Fatalf("series %s%v has no value", name, labels)
	return 0
}
