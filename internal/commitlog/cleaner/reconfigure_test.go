package cleaner

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestThrottleSleepsToTheDesiredRate: 1000 bytes in 400 ms at a limit of
// 1000 B/s must sleep the 600 ms that bring the interval to one second.
func TestThrottleSleepsToTheDesiredRate(t *testing.T) {
	clk := clock.NewManual(testStart)
	th := newThrottle(clk, 1000)
	if err := th.wait(context.Background(), 100); err != nil { // inside the check interval
		t.Fatal(err)
	}
	clk.Advance(400 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- th.wait(context.Background(), 900) }()
	clk.BlockUntil(1)
	clk.Advance(599 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("woke after 599 ms of a 600 ms nap: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	clk.Advance(time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A new interval starts after the nap: 300 bytes in 400 ms is under
	// the limit's 400.
	clk.Advance(400 * time.Millisecond)
	if err := th.wait(context.Background(), 300); err != nil {
		t.Fatal(err)
	}
	if clk.Waiters() != 0 {
		t.Fatal("slept under the limit")
	}
}

// TestThrottleUnlimitedAndChangedLive: Kafka's default (Double.MAX_VALUE)
// never sleeps; a rate set later applies to the next check.
func TestThrottleUnlimitedAndChangedLive(t *testing.T) {
	clk := clock.NewManual(testStart)
	th := newThrottle(clk, DefaultOptions().IOMaxBytesPerSecond)
	clk.Advance(time.Second)
	if err := th.wait(context.Background(), 1<<40); err != nil {
		t.Fatal(err)
	}
	th.setRate(1)
	clk.Advance(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- th.wait(ctx, 10) }() // 10 B in 1 s at 1 B/s: a 9 s nap
	clk.BlockUntil(1)
	cancel()
	if err := <-done; err == nil {
		t.Fatal("a nap cut short by its context returned no error")
	}
}

// TestReconfigureThreadsWhileRunning: a running cleaner given more threads
// and a new backoff runs with them without a restart and still cleans; a
// new I/O rate alone keeps the workers.
func TestReconfigureThreadsWhileRunning(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	l := openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	c, err := New(fs, &logSource{logs: []*commitlog.Log{l}}, testCleanerOptions(), clk, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Start(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	defer func() { _ = c.Stop(ctx) }()

	opts := testCleanerOptions()
	opts.Threads = 3
	opts.Backoff = 20 * time.Millisecond
	if err := c.Reconfigure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	p := c.pool.Load()
	if p.opts.Threads != 3 || cap(p.workers) != 3 || p.opts.Backoff != 20*time.Millisecond {
		t.Fatalf("after Reconfigure: threads %d (%d workers), backoff %v", p.opts.Threads, cap(p.workers), p.opts.Backoff)
	}
	m := fillLog(t, l, clk, records.NoCompression, 10, 12, 2)
	testutil.Eventually(t, 20*time.Second, func() bool {
		clk.Advance(time.Second) // wake the threads' backoff timers
		return metricValue(t, c.metrics.runs) >= 1
	}, "the reconfigured threads clean the dirty log")
	opts.IOMaxBytesPerSecond = 1 << 20
	if err := c.Reconfigure(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if c.pool.Load().workers != p.workers || c.throttle.rate() != 1<<20 {
		t.Fatal("a new I/O rate alone rebuilt the workers or was not applied")
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	for cleanOnce(t, c) { // what the threads had not reached when stopped
	}
	if got := checkAgainstModel(t, l, m); len(got) != 10 {
		t.Fatalf("%d records, want 10", len(got))
	}
}
