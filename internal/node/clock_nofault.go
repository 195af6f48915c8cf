//go:build !sluicefault

package node

import (
	"log/slog"

	"github.com/sluice-io/sluice/internal/clock"
)

// faultClock is the clock as it is: clock jumps exist only in binaries
// built with -tags sluicefault (clock_fault.go).
func faultClock(c clock.Clock, _ *slog.Logger) clock.Clock { return c }
