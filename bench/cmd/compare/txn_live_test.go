package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestEndTxnLoopLive starts a Sluice broker from the binary named by SLUICE_COMPARE_BIN
// (skipped without it) and runs a short EndTxn loop against it: what a transaction session
// does before its throughput runs.
func TestEndTxnLoopLive(t *testing.T) {
	bin := os.Getenv("SLUICE_COMPARE_BIN")
	if bin == "" {
		t.Skip("SLUICE_COMPARE_BIN names the sluice binary to start")
	}
	b, err := newSluiceBroker(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := createTopic(ctx, b, endTxnTopic, 1); err != nil {
		t.Fatal(err)
	}
	cfg := endTxnLoopConfig{Bootstrap: b.Bootstrap(), Topic: endTxnTopic, TxnID: "live", Warm: 5, Measure: 50, MaxSeconds: 60}
	run, err := runEndTxnLoop(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s; %.1f transactions/s", run.describe(cfg), run.ratePerSec())
}
