package purgatory

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testutil"
)

func TestReadyAtOnceDoesNotPark(t *testing.T) {
	p := New[string]()
	defer p.Close()
	ok, err := p.Wait(context.Background(), []string{"a"}, time.Hour, func() bool { return true })
	if !ok || err != nil {
		t.Fatalf("Wait = %v, %v; want true, nil", ok, err)
	}
	if n := p.Waiting(); n != 0 {
		t.Fatalf("Waiting = %d, want 0", n)
	}
}

func TestNotifyCompletesWaiter(t *testing.T) {
	p := New[string]()
	defer p.Close()
	var cond atomic.Bool
	result := make(chan bool)
	go func() {
		ok, _ := p.Wait(context.Background(), []string{"a", "b"}, time.Hour, cond.Load)
		result <- ok
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Watching("b") == 1 }, "waiter watching b")
	p.Notify("b") // condition still false: the waiter must stay parked
	cond.Store(true)
	select {
	case <-result:
		// The waiter may have seen the condition on the first notify's re-check
		// only if it re-checked after Store; either way it must finish now.
	case <-time.After(50 * time.Millisecond):
		p.Notify("a")
		if !<-result {
			t.Fatal("waiter did not complete after its condition held and Notify")
		}
	}
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Watching("a") == 0 && p.Watching("b") == 0 && p.Waiting() == 0 }, "waiter gone")
}

func TestNotifyOtherKeyDoesNotWake(t *testing.T) {
	// A manual clock: the waiter cannot expire (and check again) mid-test.
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	p := New[int](WithClock(clk))
	defer p.Close()
	var checks atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = p.Wait(context.Background(), []int{1}, 200*time.Millisecond, func() bool {
			checks.Add(1)
			return false
		})
	}()
	// Two checks: before registering and once registered.
	testutil.Eventually(t, 5*time.Second, func() bool { return checks.Load() == 2 && p.Watching(1) == 1 }, "waiter registered")
	p.Notify(2)
	// A negative: nothing may happen, so only a pause can show that nothing
	// did; 20 ms is ample for a wrong wake-up to run the check.
	time.Sleep(20 * time.Millisecond)
	if got := checks.Load(); got != 2 {
		t.Fatalf("condition checked %d times after notifying another key, want 2", got)
	}
	clk.Advance(200 * time.Millisecond)
	<-done
}

// TestTimeoutExpires moves a manual clock to a waiter's deadline: not a
// moment before does it expire.
func TestTimeoutExpires(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	p := New[string](WithClock(clk))
	defer p.Close()
	type result struct {
		ok  bool
		err error
	}
	res := make(chan result, 1)
	go func() {
		ok, err := p.Wait(context.Background(), []string{"a"}, 30*time.Second, func() bool { return false })
		res <- result{ok, err}
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Waiting() == 1 }, "waiter parked")
	clk.Advance(30*time.Second - time.Millisecond)
	// Nothing can expire the waiter until the clock moves again.
	if p.Waiting() != 1 {
		t.Fatal("waiter expired before its timeout")
	}
	clk.Advance(time.Millisecond)
	if r := <-res; r.ok || r.err != nil {
		t.Fatalf("Wait = %v, %v; want false, nil", r.ok, r.err)
	}
	if p.Waiting() != 0 || p.Watching("a") != 0 {
		t.Fatal("expired waiter left behind")
	}
}

// TestTimeoutExpiresOnRealClock checks the default clock times deadlines.
func TestTimeoutExpiresOnRealClock(t *testing.T) {
	p := New[string]()
	defer p.Close()
	start := time.Now()
	ok, err := p.Wait(context.Background(), []string{"a"}, 30*time.Millisecond, func() bool { return false })
	if ok || err != nil {
		t.Fatalf("Wait = %v, %v; want false, nil", ok, err)
	}
	if d := time.Since(start); d < 30*time.Millisecond {
		t.Fatalf("expired after %v, before its timeout", d)
	}
}

// TestEarlierDeadlineAfterLaterOne: a short deadline parked behind a long
// one expires on time, and the long one stays.
func TestEarlierDeadlineAfterLaterOne(t *testing.T) {
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	p := New[string](WithClock(clk))
	defer p.Close()
	go func() { _, _ = p.Wait(context.Background(), []string{"slow"}, time.Hour, func() bool { return false }) }()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Waiting() == 1 }, "slow waiter parked")
	fast := make(chan bool, 1)
	go func() {
		ok, _ := p.Wait(context.Background(), []string{"fast"}, 20*time.Millisecond, func() bool { return false })
		fast <- ok
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Waiting() == 2 }, "fast waiter parked")
	clk.Advance(20 * time.Millisecond)
	if <-fast {
		t.Fatal("Wait reported ready")
	}
	if p.Watching("slow") != 1 {
		t.Fatal("the long deadline expired with the short one")
	}
}

func TestZeroTimeoutChecksOnce(t *testing.T) {
	p := New[string]()
	defer p.Close()
	calls := 0
	ok, err := p.Wait(context.Background(), []string{"a"}, 0, func() bool { calls++; return false })
	if ok || err != nil || calls != 1 {
		t.Fatalf("Wait = %v, %v after %d checks; want false, nil after 1", ok, err, calls)
	}
}

func TestContextCancel(t *testing.T) {
	p := New[string]()
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error)
	go func() {
		_, err := p.Wait(ctx, []string{"a"}, time.Hour, func() bool { return false })
		res <- err
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Waiting() == 1 }, "waiter parked")
	cancel()
	if err := <-res; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestCloseWakesWaiters(t *testing.T) {
	p := New[string]()
	res := make(chan error)
	go func() {
		_, err := p.Wait(context.Background(), []string{"a"}, time.Hour, func() bool { return false })
		res <- err
	}()
	testutil.Eventually(t, 5*time.Second, func() bool { return p.Waiting() == 1 }, "waiter parked")
	p.Close()
	if err := <-res; !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v, want ErrClosed", err)
	}
	p.Close()
	if _, err := p.Wait(context.Background(), []string{"a"}, time.Hour, func() bool { return false }); !errors.Is(err, ErrClosed) {
		t.Fatalf("Wait after Close: err = %v, want ErrClosed", err)
	}
}

// TestConcurrentNotifyNoLostWakeup races notifiers against waiters: every
// waiter must complete once the counter it waits for is reached, however the
// notifications interleave with its checks.
func TestConcurrentNotifyNoLostWakeup(t *testing.T) {
	p := New[int]()
	defer p.Close()
	var counter atomic.Int64
	const waiters, target = 20, 200
	var wg sync.WaitGroup
	failures := make(chan string, waiters)
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := p.Wait(context.Background(), []int{i % 3}, 10*time.Second, func() bool { return counter.Load() >= target })
			if !ok || err != nil {
				failures <- "waiter did not complete"
			}
		}()
	}
	for range target {
		counter.Add(1)
		for k := range 3 {
			p.Notify(k)
		}
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Fatal(f)
	}
}
