package main

import (
	"testing"
	"time"
)

// TestLoadGeneratorLive starts a Sluice broker from the binary named by SLUICE_COMPARE_BIN
// (skipped without it) and runs the Go generator briefly at a fixed rate with its
// consumer: every acknowledged record must come back, with a latency for each.
func TestLoadGeneratorLive(t *testing.T) {
	b, ctx := liveSluice(t)
	spec := loadSpec{Topic: "live", Partitions: 8, Producers: 3, KeyRange: 100, Rate: 2000, Warm: time.Second, Measure: 2 * time.Second, EndToEnd: true}
	if err := createTopic(ctx, b, spec.Topic, spec.Partitions); err != nil {
		t.Fatal(err)
	}
	res, err := runLoad(ctx, b, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Acked < 2000 || res.E2E.Count() < uint64(res.Acked)/2 {
		t.Fatalf("acked %d in the window, %d latencies recorded", res.Acked, res.E2E.Count())
	}
	t.Logf("%.2f MB/s, e2e p50 %.3f ms p99 %.3f ms max %.3f ms", res.MBps(), ms(res.E2E.Quantile(0.5)), ms(res.E2E.Quantile(0.99)), ms(res.E2E.Max()))
}
