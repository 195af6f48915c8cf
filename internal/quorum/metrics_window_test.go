package quorum

import (
	"math"
	"testing"
	"time"
)

// TestWindowedStat: values count until both 30 s samples have aged out;
// an empty window is NaN, as Kafka's Avg and Max are.
func TestWindowedStat(t *testing.T) {
	var w windowedStat
	t0 := time.Unix(1000, 0)
	if a, m := w.measure(t0); !math.IsNaN(a) || !math.IsNaN(m) {
		t.Fatalf("empty: %v %v", a, m)
	}
	w.record(10, t0)
	w.record(30, t0.Add(10*time.Second))
	if a, m := w.measure(t0.Add(20 * time.Second)); a != 20 || m != 30 {
		t.Fatalf("one sample: avg %v max %v", a, m)
	}
	// A second sample starts after 30 s; the first still counts.
	w.record(2, t0.Add(40*time.Second))
	if a, m := w.measure(t0.Add(50 * time.Second)); a != 14 || m != 30 {
		t.Fatalf("two samples: avg %v max %v", a, m)
	}
	// 60 s after it began, the first sample is dropped.
	if a, m := w.measure(t0.Add(60 * time.Second)); a != 2 || m != 2 {
		t.Fatalf("first sample expired: avg %v max %v", a, m)
	}
	// A third sample reuses the first one's place.
	w.record(7, t0.Add(75*time.Second))
	if a, m := w.measure(t0.Add(80 * time.Second)); a != 4.5 || m != 7 {
		t.Fatalf("third sample: avg %v max %v", a, m)
	}
	if a, m := w.measure(t0.Add(200 * time.Second)); !math.IsNaN(a) || !math.IsNaN(m) {
		t.Fatalf("all expired: %v %v", a, m)
	}
}
