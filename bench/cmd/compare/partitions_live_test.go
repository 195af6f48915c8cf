package main

import (
	"log/slog"
	"os"
	"testing"
	"time"
)

// TestPartitionsLive runs the partitions phase's session at a small scale against a Sluice
// broker from the binary SLUICE_COMPARE_BIN names (skipped without it): 200 partitions,
// 16 MiB, both restarts, the end-offset check after each, and the fixed-rate run.
func TestPartitionsLive(t *testing.T) {
	b, ctx := liveSluice(t)
	cfg := partsConfig{Partitions: 200, Producers: 2, Bytes: 16 << 20, MaxRun: time.Minute}
	s := &suite{prof: profile{Name: "live", Rounds: 1, RateWarm: 2, RateMeasure: 3}, res: newResults(), log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	if err := s.partsRuns(ctx, b, sysSluice, 1, cfg); err != nil {
		t.Fatal(err)
	}
	if len(s.res.failures) > 0 {
		t.Fatalf("failures: %+v", s.res.failures)
	}
	for _, rw := range []row{partsCreateRow(cfg), partsProduceRow(cfg), partsRestartRow(cfg, true, true), partsRestartRow(cfg, false, true), partsRSSIdleRow(cfg), partsE2ERow(cfg, "p99"), partsCPUFixedRow(cfg)} {
		v, ok := s.res.median(rw.Key, sysSluice)
		if !ok || v <= 0 {
			t.Errorf("%s: %v, %v", rw.Key, v, ok)
		}
		t.Logf("%s: %.2f %s", rw.Label, v, rw.Unit)
	}
}
