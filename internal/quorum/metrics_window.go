package quorum

import (
	"math"
	"time"
)

// Kafka's metrics keep two samples of 30 s each (metrics.num.samples,
// metrics.sample.window.ms): an Avg or Max covers what was recorded in
// the last 30 to 60 s.
const (
	statSamples = 2
	statWindow  = 30 * time.Second
)

// windowedStat is Kafka's SampledStat for Avg and Max together: values go
// into the current sample until it is a window old, then into the oldest
// sample, reset; samples older than all the windows together are dropped
// when measured.
type windowedStat struct {
	samples [statSamples]statSample
	current int
}

type statSample struct {
	start time.Time
	count int64
	sum   float64
	max   float64
}

func (w *windowedStat) record(v float64, now time.Time) {
	s := &w.samples[w.current]
	if s.start.IsZero() {
		*s = statSample{start: now, max: math.Inf(-1)}
	} else if now.Sub(s.start) >= statWindow {
		w.current = (w.current + 1) % statSamples
		s = &w.samples[w.current]
		*s = statSample{start: now, max: math.Inf(-1)}
	}
	s.count++
	s.sum += v
	s.max = max(s.max, v)
}

// measure returns the average and the maximum of the samples still in the
// window at now; both are NaN when there are none, as Kafka's are.
func (w *windowedStat) measure(now time.Time) (avg, mx float64) {
	var count int64
	var sum float64
	mx = math.Inf(-1)
	for i := range w.samples {
		s := &w.samples[i]
		if s.start.IsZero() || now.Sub(s.start) >= statSamples*statWindow {
			continue
		}
		count += s.count
		sum += s.sum
		mx = max(mx, s.max)
	}
	if count == 0 {
		return math.NaN(), math.NaN()
	}
	return sum / float64(count), mx
}
