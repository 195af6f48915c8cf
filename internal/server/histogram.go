package server

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bucket bounds of the request time histograms, in milliseconds: from a
// tenth of a millisecond (a cached Metadata answer) to 30 s (a request
// timeout), a little over two buckets per decade.
var timeBucketsMs = []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000}

// Bucket bounds of the request size histogram: 64 bytes to 64 MiB by 4s.
var sizeBuckets = prometheus.ExponentialBuckets(64, 4, 11)

// histogram is a Prometheus histogram of plain atomics, observed on the
// request path without locks or label lookups and read at scrape time.
// Observations are integers (nanoseconds, bytes), so the sum is one atomic
// add; scale converts them to the exported unit.
type histogram struct {
	bounds   []int64
	exported []float64
	scale    float64
	// counts[i] counts observations in (bounds[i-1], bounds[i]]; the last
	// one those above every bound.
	counts []atomic.Uint64
	sum    atomic.Int64
}

// newHistogram makes a histogram exporting bounds, whose observations are
// in units of 1/scale of the exported unit.
func newHistogram(exported []float64, scale float64) *histogram {
	h := &histogram{exported: exported, scale: scale, bounds: make([]int64, len(exported)),
		counts: make([]atomic.Uint64, len(exported)+1)}
	for i, b := range exported {
		h.bounds[i] = int64(b / scale)
	}
	return h
}

// newTimeHistogram exports milliseconds; observations are nanoseconds.
func newTimeHistogram() *histogram { return newHistogram(timeBucketsMs, 1/float64(time.Millisecond)) }

func newSizeHistogram() *histogram { return newHistogram(sizeBuckets, 1) }

func (h *histogram) observe(v int64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// metric renders the histogram; the count is the buckets' total, so _count
// always equals the +Inf bucket even while observations race the scrape.
func (h *histogram) metric(desc *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cumulative uint64
	for i, b := range h.exported {
		cumulative += h.counts[i].Load()
		buckets[b] = cumulative
	}
	cumulative += h.counts[len(h.bounds)].Load()
	return prometheus.MustNewConstHistogram(desc, cumulative, float64(h.sum.Load())*h.scale, buckets, labels...)
}
