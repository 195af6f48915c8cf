// Package latency records durations for the load generators (`sluice
// bench`, bench/compare) with sub-millisecond resolution in fixed memory.
package latency

import (
	"math/bits"
	"time"
)

// Histogram records durations in microseconds in log-linear buckets, as
// HdrHistogram does: below subBuckets µs one bucket per µs, above it
// subBuckets linear steps per power of two, so a quantile is off by at most
// 1/subBuckets (0.8%) of its value however many samples are recorded. Not
// safe for concurrent use.
type Histogram struct {
	counts [64 * subBuckets]uint64
	total  uint64
	max    time.Duration
}

const subBucketBits = 7
const subBuckets = 1 << subBucketBits

// Resolution is the largest relative error of a quantile.
const Resolution = 1.0 / subBuckets

func bucketOf(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	exp := bits.Len64(us) - subBucketBits // >= 1
	return exp*subBuckets + int(us>>uint(exp-1)) - subBuckets
}

// bucketUpper is the largest value (µs) that falls in bucket i.
func bucketUpper(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	exp := i / subBuckets
	mant := uint64(i%subBuckets + subBuckets)
	return (mant+1)<<uint(exp-1) - 1
}

// Record adds one sample (a negative one counts as 0).
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[bucketOf(uint64(d/time.Microsecond))]++
	h.total++
	h.max = max(h.max, d)
}

// Quantile returns the q-quantile (0 < q <= 1): the upper bound of its
// bucket, capped by the largest sample; 0 when nothing was recorded.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(q*float64(h.total) + 0.5)
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(bucketUpper(i))*time.Microsecond, h.max)
		}
	}
	return h.max
}

// Merge adds o's samples to h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.max = max(h.max, o.max)
}

// Count is the number of samples recorded.
func (h *Histogram) Count() uint64 { return h.total }

// Max is the largest sample recorded.
func (h *Histogram) Max() time.Duration { return h.max }
