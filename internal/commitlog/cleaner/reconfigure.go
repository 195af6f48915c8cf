package cleaner

import (
	"context"
	"fmt"
)

// Reconfigure applies new options without a restart, as Kafka's
// LogCleaner.reconfigure for its dynamic log.cleaner.* keys: a new I/O rate
// takes effect at once, in the cleans running; any other change stops the
// threads (aborting cleans in progress, which start again from the
// checkpoint), rebuilds the workers with the new threads and buffers, and
// starts them again if they were running. ctx bounds the wait for the
// threads to stop.
func (c *Cleaner) Reconfigure(ctx context.Context, opts Options) error {
	c.reconfigure.Lock()
	defer c.reconfigure.Unlock()
	opts = opts.normalized()
	c.throttle.setRate(opts.IOMaxBytesPerSecond)
	old := c.pool.Load()
	if old.opts.sameWorkers(opts) {
		if old.opts != opts {
			c.pool.Store(&workerPool{opts: opts, workers: old.workers})
		}
		return nil
	}
	c.mu.Lock()
	running, parent := c.mu.cancel != nil, c.mu.parent
	c.mu.Unlock()
	if err := c.Stop(ctx); err != nil {
		return fmt.Errorf("reconfigure log cleaner: %w", err)
	}
	c.pool.Store(newWorkerPool(opts, c.throttle))
	if running {
		c.Start(parent)
	}
	c.logger.Info("log cleaner reconfigured", "threads", opts.Threads, "dedupe_buffer_bytes", opts.DedupeBufferSize,
		"io_buffer_bytes", opts.IOBufferSize, "backoff", opts.Backoff)
	return nil
}

// Options returns the options the cleaner runs with (normalized).
func (c *Cleaner) Options() Options { return c.pool.Load().opts }
