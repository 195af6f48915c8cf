package main

import (
	"math/bits"
	"time"
)

// latencyHist records durations in microseconds in log-linear buckets, as HdrHistogram
// does: below histSub µs one bucket per µs, above it histSub linear steps per power of two,
// so a quantile is off by at most 1/histSub (0.8%) of its value, in fixed memory. It is
// the same scheme as `sluice bench` (internal/cli/bench_stats.go), a little finer; a copy,
// because that one is unexported in package cli. Not safe for concurrent use.
type latencyHist struct {
	counts [64 * histSub]uint64
	total  uint64
	max    time.Duration
}

const histSubBits = 7
const histSub = 1 << histSubBits

func histBucket(us uint64) int {
	if us < histSub {
		return int(us)
	}
	exp := bits.Len64(us) - histSubBits
	return exp*histSub + int(us>>uint(exp-1)) - histSub
}

// histUpper is the largest value (µs) that falls in bucket i.
func histUpper(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	exp := i / histSub
	mant := uint64(i%histSub + histSub)
	return (mant+1)<<uint(exp-1) - 1
}

func (h *latencyHist) record(d time.Duration) {
	d = max(d, 0)
	h.counts[histBucket(uint64(d/time.Microsecond))]++
	h.total++
	h.max = max(h.max, d)
}

// quantile is the q-quantile (0 < q <= 1): the upper bound of its bucket, capped by the
// largest sample; 0 when nothing was recorded.
func (h *latencyHist) quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total) + 0.5)
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(histUpper(i))*time.Microsecond, h.max)
		}
	}
	return h.max
}

// merge adds o's samples to h.
func (h *latencyHist) merge(o *latencyHist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}
