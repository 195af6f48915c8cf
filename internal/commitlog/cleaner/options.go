package cleaner

import (
	"math"
	"time"
)

// Options are the broker's log.cleaner.* settings.
type Options struct {
	// Threads is log.cleaner.threads: logs cleaned at the same time.
	Threads int
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size: memory for the
	// offset maps of all threads together.
	DedupeBufferSize int64
	// DedupeBufferLoadFactor is log.cleaner.io.buffer.load.factor: how full
	// an offset map may get.
	DedupeBufferLoadFactor float64
	// IOBufferSize is log.cleaner.io.buffer.size: read and write buffers of
	// all threads together.
	IOBufferSize int
	// Backoff is log.cleaner.backoff.ms: the pause when no log needs
	// cleaning, and before a log whose clean failed is tried again.
	Backoff time.Duration
	// IOMaxBytesPerSecond is log.cleaner.io.max.bytes.per.second: the
	// bytes all threads together read and write per second; zero or
	// Kafka's default (Double.MAX_VALUE) is no limit.
	IOMaxBytesPerSecond float64
}

// DefaultOptions returns Kafka's defaults.
func DefaultOptions() Options {
	return Options{
		Threads:                1,
		DedupeBufferSize:       128 << 20,
		DedupeBufferLoadFactor: 0.9,
		IOBufferSize:           512 << 10,
		Backoff:                15 * time.Second,
		IOMaxBytesPerSecond:    math.MaxFloat64,
	}
}

func (o Options) normalized() Options {
	o.Threads = max(o.Threads, 1)
	if o.DedupeBufferLoadFactor <= 0 || o.DedupeBufferLoadFactor > 1 {
		o.DedupeBufferLoadFactor = 0.9
	}
	o.DedupeBufferSize = max(o.DedupeBufferSize, int64(o.Threads)*offsetSlotSize*4)
	o.IOBufferSize = max(o.IOBufferSize, 1)
	if o.Backoff <= 0 {
		o.Backoff = 15 * time.Second
	}
	return o
}

// sameWorkers reports whether o and p make the same threads and workers:
// only the I/O rate, which the throttle changes in place, may differ.
func (o Options) sameWorkers(p Options) bool {
	o.IOMaxBytesPerSecond, p.IOMaxBytesPerSecond = 0, 0
	return o == p
}
