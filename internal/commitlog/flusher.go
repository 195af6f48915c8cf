package commitlog

import (
	"log/slog"
	"sync"
)

// flusher is the Manager's goroutine that runs the flushes rolls ask for
// (Kafka schedules one "flush-log" task per roll on the log manager's
// scheduler): the sealed segments are synced off the append path and each
// log's recovery point advances as they are, so the periodic
// recovery-point checkpoint bounds what recovery re-validates after a
// crash. It runs from NewManager to Close.
type flusher struct {
	logger *slog.Logger

	mu struct {
		sync.Mutex
		queue []rollFlush
		// busy counts the requests taken off queue and not yet finished.
		busy    int
		stopped bool
	}
	// idle is broadcast (with mu) whenever a batch of requests finishes.
	idle *sync.Cond
	wake chan struct{} // buffer of one: a pending wake-up is never doubled
	stop chan struct{}
	done chan struct{}
}

func newFlusher(logger *slog.Logger) *flusher {
	f := &flusher{logger: logger, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	f.idle = sync.NewCond(&f.mu)
	go f.run()
	return f
}

// enqueue queues a roll's flush; it never blocks (a roll holds its log's
// lock). After close, requests are dropped: closing the log flushes it.
func (f *flusher) enqueue(r rollFlush) {
	f.mu.Lock()
	if !f.mu.stopped {
		f.mu.queue = append(f.mu.queue, r)
	}
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

func (f *flusher) run() {
	defer close(f.done)
	for {
		select {
		case <-f.stop:
			f.runQueued() // what rolls asked for before close still runs
			return
		case <-f.wake:
		}
		f.runQueued()
	}
}

func (f *flusher) runQueued() {
	f.mu.Lock()
	batch := f.mu.queue
	f.mu.queue = nil
	f.mu.busy += len(batch)
	f.mu.Unlock()
	for _, r := range batch {
		if err := r.log.flushRolled(r); err != nil {
			f.logger.Warn("flushing rolled segments failed", "partition", r.log.tp.String(), "err", err)
		}
	}
	f.mu.Lock()
	f.mu.busy -= len(batch)
	f.idle.Broadcast()
	f.mu.Unlock()
}

// drain waits until every queued flush has run (tests, benchmarks).
func (f *flusher) drain() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.mu.queue) > 0 || f.mu.busy > 0 {
		f.idle.Wait()
	}
}

// close runs the queued flushes and stops the goroutine. The Manager
// calls it before closing its logs: a log's Close flushes only what is at
// or above its recovery point, and a roll's flush also syncs the sealed
// segment's final indexes, which a Flush before the roll did not cover.
func (f *flusher) close() {
	f.mu.Lock()
	if f.mu.stopped {
		f.mu.Unlock()
		return
	}
	f.mu.stopped = true
	f.mu.Unlock()
	close(f.stop)
	<-f.done
}
