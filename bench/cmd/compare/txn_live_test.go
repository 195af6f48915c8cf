package main

import (
	"testing"
)

// TestEndTxnLoopLive starts a Sluice broker from the binary named by SLUICE_COMPARE_BIN
// (skipped without it) and runs a short EndTxn loop against it: what a transaction session
// does before its throughput runs.
func TestEndTxnLoopLive(t *testing.T) {
	b, ctx := liveSluice(t)
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
