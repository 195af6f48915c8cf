package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// liveSluice starts a Sluice broker from the binary SLUICE_COMPARE_BIN names
// (the test is skipped without it), closed when the test ends, and returns it
// with a context that bounds the test's work to two minutes.
func liveSluice(t *testing.T) (*sluiceBroker, context.Context) {
	t.Helper()
	bin := os.Getenv("SLUICE_COMPARE_BIN")
	if bin == "" {
		t.Skip("SLUICE_COMPARE_BIN names the sluice binary to start")
	}
	b, err := newSluiceBroker(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return b, ctx
}
