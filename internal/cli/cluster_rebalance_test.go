package cli

import (
	"strings"
	"testing"
	"time"
)

// TestProgressLine: the bar follows the share copied since the start, and
// the estimate divides what is left by the rate seen so far.
func TestProgressLine(t *testing.T) {
	t0 := time.Unix(0, 0)
	start := moveProgress{at: t0, partitions: 4, total: 400 << 20, copied: 0}
	now := moveProgress{at: t0.Add(10 * time.Second), partitions: 2, total: 200 << 20, copied: 100 << 20}
	line := progressLine(start, now, true)
	for _, want := range []string{"[######################........]", " 75%", "100.0 MiB left to copy", "2 partitions moving", "ETA 3s (30.0 MiB/s)"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	if line := progressLine(start, moveProgress{at: t0.Add(time.Second)}, true); !strings.Contains(line, "100%") || !strings.HasSuffix(line, "done") {
		t.Errorf("finished: %q", line)
	}
	snapshot := progressLine(now, now, false)
	if !strings.Contains(snapshot, " 50%") || !strings.Contains(snapshot, "estimating") {
		t.Errorf("status snapshot: %q", snapshot)
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 10 << 30: "10.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
