package quorumctl

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// TestMetricsCollector: the gauges follow the leadership and the image
// at each scrape.
func TestMetricsCollector(t *testing.T) {
	d := metadata.NewDelta(metadata.EmptyImage())
	for _, r := range []metadata.Record{
		&metadata.RegisterBrokerRecord{BrokerID: 1, IncarnationID: kafka.UUID{1}, BrokerEpoch: 1},
		&metadata.TopicRecord{Name: "t", TopicID: kafka.UUID{2}},
		&metadata.PartitionRecord{TopicID: kafka.UUID{2}, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: -1},
	} {
		if err := d.Replay(0, 1, r); err != nil {
			t.Fatal(err)
		}
	}
	im := d.Apply()
	active := false
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewMetricsCollector(func() bool { return active }, func() *metadata.Image { return im }))
	want := map[string]float64{
		"activecontrollercount": 0, "offlinepartitionscount": 1, "globalpartitioncount": 1, "globaltopiccount": 1,
		"activebrokercount": 1, "fencedbrokercount": 0, "preferredreplicaimbalancecount": 1, "metadataerrorcount": 0,
	}
	check := func() {
		t.Helper()
		got := gather(t, reg)
		if len(got) != len(want) {
			t.Fatalf("series %v, want %v", got, want)
		}
		for name, v := range want {
			if g, ok := got["kafka_controller_kafkacontroller_"+name]; !ok || g != v {
				t.Errorf("%s = %v (present %v), want %v", name, g, ok, v)
			}
		}
	}
	check()
	active, want["activecontrollercount"] = true, 1
	check()
}

// gather scrapes reg and returns each gauge's value by name.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			out[mf.GetName()] = m.GetGauge().GetValue()
		}
	}
	return out
}
