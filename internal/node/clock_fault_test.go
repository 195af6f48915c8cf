//go:build sluicefault

package node

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testutil"
)

func TestFaultClockFollowsItsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "clock")
	t.Setenv("SLUICE_FAULT_CLOCK_FILE", file)
	c := faultClock(clock.Real{}, slog.New(slog.DiscardHandler))
	if d := c.Now().Sub(time.Now()); d < -time.Second || d > time.Second {
		t.Fatalf("no file, offset %v", d)
	}
	if err := os.WriteFile(file, []byte("-90s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		d := time.Now().Sub(c.Now())
		return d > 89*time.Second && d < 91*time.Second
	}, "clock 90s behind")
	if err := os.WriteFile(file, []byte("0s"), 0o644); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		d := c.Now().Sub(time.Now())
		return d > -time.Second && d < time.Second
	}, "clock back")
}
