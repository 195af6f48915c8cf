package cleaner

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
)

// throttleCheckInterval is how often the throttle compares the observed
// rate with the desired one (Kafka's LogCleaner passes 300 ms).
const throttleCheckInterval = 300 * time.Millisecond

// throttle is Kafka's Throttler as the cleaner uses it: every thread
// reports the bytes it read and wrote, and once a check interval has passed
// with the rate above log.cleaner.io.max.bytes.per.second, the reporting
// thread sleeps long enough to bring the interval's rate down to it. One
// throttle serves all threads, so the limit is the cleaner's, not each
// thread's. The rate can change while cleans run (a dynamic config).
type throttle struct {
	clk clock.Clock
	// rateBits is the desired bytes per second (math.Float64bits); zero,
	// negative, infinite or NaN: no limit.
	rateBits atomic.Uint64

	mu sync.Mutex
	// Invariant: periodStart and observed are the current check
	// interval's start and the bytes reported since; only mu's holder
	// sleeps, so a thread arriving meanwhile counts after the nap, as in
	// Kafka (its Throttler sleeps inside its lock).
	periodStart time.Time
	observed    float64
}

func newThrottle(clk clock.Clock, rate float64) *throttle {
	t := &throttle{clk: clk, periodStart: clk.Now()}
	t.setRate(rate)
	return t
}

func (t *throttle) setRate(rate float64) { t.rateBits.Store(math.Float64bits(rate)) }

func (t *throttle) rate() float64 { return math.Float64frombits(t.rateBits.Load()) }

func limited(rate float64) bool {
	return rate > 0 && !math.IsInf(rate, 0) && !math.IsNaN(rate) && rate < math.MaxFloat64
}

// wait reports n bytes of I/O and sleeps if the rate is over the limit.
// It returns ctx's error when ctx ends during the sleep.
func (t *throttle) wait(ctx context.Context, n int64) error {
	rate := t.rate()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.observed += float64(n)
	now := t.clk.Now()
	elapsed := now.Sub(t.periodStart)
	if elapsed <= throttleCheckInterval || t.observed <= 0 {
		return nil
	}
	var err error
	if limited(rate) && t.observed/elapsed.Seconds() > rate {
		// The sleep that makes observed bytes over the whole interval
		// arrive at the desired rate.
		nap := time.Duration(t.observed/rate*float64(time.Second)) - elapsed
		if nap > 0 {
			err = t.sleep(ctx, nap)
		}
	}
	t.periodStart = t.clk.Now()
	t.observed = 0
	return err
}

func (t *throttle) sleep(ctx context.Context, d time.Duration) error {
	timer := t.clk.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
