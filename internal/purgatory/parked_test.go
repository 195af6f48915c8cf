package purgatory

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testutil"
)

func TestParkedTimeAddsOnlyParkedWaits(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	p := New[string](WithClock(clk))
	defer p.Close()
	parked := NewParkedTime(clk)
	ctx := WithParkedTime(context.Background(), parked)

	if ok, _ := p.Wait(ctx, []string{"a"}, time.Second, func() bool { return true }); !ok {
		t.Fatal("ready wait did not succeed")
	}
	if d := parked.Take(); d != 0 {
		t.Fatalf("a wait ready at once parked %v, want 0", d)
	}

	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Wait(ctx, []string{"a"}, 700*time.Millisecond, func() bool { return false })
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Waiting() == 1 }, "waiter parked")
	clk.Advance(700 * time.Millisecond)
	<-done
	if d := parked.Take(); d != 700*time.Millisecond {
		t.Fatalf("an expired wait parked %v, want 700ms", d)
	}
	if d := parked.Take(); d != 0 {
		t.Fatalf("Take after Take = %v, want 0", d)
	}
}

func TestParkedTimeCountsOverlappingWaitsOnce(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	parked := NewParkedTime(clk)
	ctx := WithParkedTime(context.Background(), parked)
	Park(ctx) // two shards asked at once
	Park(ctx)
	clk.Advance(100 * time.Millisecond)
	Unpark(ctx)
	clk.Advance(50 * time.Millisecond)
	Unpark(ctx)
	clk.Advance(time.Second) // not parked
	if d := parked.Take(); d != 150*time.Millisecond {
		t.Fatalf("overlapping waits parked %v, want 150ms", d)
	}
	Park(context.Background()) // no ParkedTime: nothing to do
	Unpark(context.Background())
}
