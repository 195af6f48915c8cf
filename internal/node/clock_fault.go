//go:build sluicefault

package node

import (
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
)

// Fault tests only (a binary built with -tags sluicefault; release builds
// never have it): SLUICE_FAULT_CLOCK_FILE names a file holding a Go
// duration ("90s", "-2m") added to the node's clock, read every 100 ms, as
// an NTP step would move the wall clock (sluice verify's clock-jump). The
// jumped time carries no monotonic reading, so durations measured across
// the jump see it, as Kafka's wall-clock timeouts would.
func faultClock(c clock.Clock, logger *slog.Logger) clock.Clock {
	file := os.Getenv("SLUICE_FAULT_CLOCK_FILE")
	if file == "" {
		return c
	}
	logger.Warn("fault injection build: the clock follows the offset in a file", "file", file)
	oc := &offsetClock{Clock: c}
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			b, err := os.ReadFile(file)
			d, perr := time.ParseDuration(strings.TrimSpace(string(b)))
			if err != nil || perr != nil {
				d = 0
			}
			if old := oc.offset.Swap(int64(d)); old != int64(d) {
				logger.Warn("fault injection: clock offset", "offset", d, "was", time.Duration(old))
			}
		}
	}()
	return oc
}

// offsetClock is a clock moved by offset; its timers run on real time.
type offsetClock struct {
	clock.Clock
	offset atomic.Int64
}

func (c *offsetClock) Now() time.Time {
	t := c.Clock.Now()
	if d := time.Duration(c.offset.Load()); d != 0 {
		return t.Round(0).Add(d)
	}
	return t
}
