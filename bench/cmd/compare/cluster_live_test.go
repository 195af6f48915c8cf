package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestSluiceClusterLive starts a 3-node Sluice cluster from the binary named by
// SLUICE_COMPARE_BIN (skipped without it), creates a replicated topic and closes it: what a
// 3-node session does before its first workload.
func TestSluiceClusterLive(t *testing.T) {
	bin := os.Getenv("SLUICE_COMPARE_BIN")
	if bin == "" {
		t.Skip("SLUICE_COMPARE_BIN names the sluice binary to start")
	}
	c, err := newSluiceCluster(bin, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t0 := time.Now()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("started in %v at %s", time.Since(t0), c.Bootstrap())
	if err := createTopic(ctx, c, "live", 16); err != nil {
		t.Fatal(err)
	}
	t.Logf("topic in sync after %v", time.Since(t0))
}
