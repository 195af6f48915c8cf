package commitlog

import (
	"testing"
	"time"
)

func TestCompactedLogRollsByMaxCompactionLag(t *testing.T) {
	for _, compact := range []bool{false, true} {
		e := newMemEnv(t)
		opts := testOptions()
		opts.SegmentBytes = 1 << 20
		opts.SegmentMs = 24 * time.Hour
		opts.MaxCompactionLag = time.Minute
		opts.Compact = compact
		l := e.open(opts, StartState{})
		ts := testStart.UnixMilli()
		for _, at := range []int64{ts, ts + 2*time.Minute.Milliseconds()} {
			if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 10, timestamp: at}), 0); err != nil {
				t.Fatal(err)
			}
		}
		want := 1
		if compact {
			want = 2 // max.compaction.lag.ms (1 min) rolls before segment.ms (1 day)
		}
		if got := len(l.Segments()); got != want {
			t.Fatalf("compact=%v: %d segments, want %d", compact, got, want)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
