package coordinator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/internal/coordinator/group"
	"sluice/internal/records"
)

// shard is the coordinator of one __consumer_offsets partition: an event
// loop that owns the partition's group.Manager, and a writer goroutine that
// appends what the Manager emits.
type shard struct {
	opts      *Options
	partition int32
	epoch     int32
	log       *slog.Logger

	loaded atomic.Bool
	// events are closures run on the loop with the current time and the
	// partition's groups.
	events *queue[func(time.Time, *group.Manager)]
	// writes go from the loop to the writer; completions come back to the
	// loop through events.
	writes *queue[group.Write]

	ctx    context.Context
	cancel context.CancelFunc
	// done is closed when the loop has stopped; callers waiting for a reply
	// give up then (NOT_COORDINATOR).
	done       chan struct{}
	writerDone chan struct{}
}

func newShard(opts *Options, partition, epoch int32) *shard {
	ctx, cancel := context.WithCancel(context.Background())
	s := &shard{
		opts: opts, partition: partition, epoch: epoch,
		log:    opts.Logger.With("partition", partition, "leader_epoch", epoch),
		events: newQueue[func(time.Time, *group.Manager)](), writes: newQueue[group.Write](),
		ctx: ctx, cancel: cancel, done: make(chan struct{}), writerDone: make(chan struct{}),
	}
	go s.runWriter()
	go s.run()
	return s
}

// stop ends the shard and waits for its goroutines.
func (s *shard) stop() {
	s.cancel()
	<-s.done
	<-s.writerDone
}

// submit queues fn for the loop, or returns the code to answer when the
// shard cannot serve: stopped (NOT_COORDINATOR) or loading.
func (s *shard) submit(fn func(now time.Time, mgr *group.Manager)) int16 {
	select {
	case <-s.done:
		return kerr.NotCoordinator.Code
	default:
	}
	if !s.loaded.Load() {
		return kerr.CoordinatorLoadInProgress.Code
	}
	s.events.push(fn)
	return 0
}

func (s *shard) run() {
	defer close(s.done)
	mgr, err := s.load()
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Error("loading group coordinator partition", "err", err)
		}
		return
	}
	s.loaded.Store(true)
	s.log.Info("group coordinator partition loaded", "groups", len(mgr.GroupIDs()))
	// The loop wakes every TickInterval while some group has a timer
	// running, and otherwise only for the offset expiry check, so idle
	// partitions cost nothing.
	timer := time.NewTimer(s.opts.TickInterval)
	defer timer.Stop()
	for {
		select {
		case <-s.ctx.Done():
			mgr.Shutdown(kerr.NotCoordinator.Code)
			return
		case <-s.events.notify:
			now := s.opts.Clock.Now()
			for _, fn := range s.events.drain() {
				fn(now, mgr)
			}
		case <-timer.C:
		}
		now := s.opts.Clock.Now()
		mgr.Tick(now)
		for _, w := range mgr.TakeWrites() {
			s.writes.push(w)
		}
		timer.Reset(s.nextWake(mgr))
	}
}

// nextWake is how long the loop may sleep when no event comes.
func (s *shard) nextWake(mgr *group.Manager) time.Duration {
	if mgr.HasTimers() {
		return s.opts.TickInterval
	}
	if d := s.opts.Group.OffsetsRetentionCheckInterval; d > 0 {
		return d
	}
	return time.Minute
}

// load replays the partition from its start up to its log end offset,
// retrying while the partition is not readable yet (the replica manager may
// learn of its leadership after us).
func (s *shard) load() (*group.Manager, error) {
	for attempt := 0; ; attempt++ {
		mgr := group.NewManager(s.opts.Group, s.opts.Clock.Now())
		err := s.replay(mgr)
		if err == nil {
			mgr.FinishLoad(s.opts.Clock.Now())
			return mgr, nil
		}
		level := slog.LevelDebug
		if attempt == 0 {
			level = slog.LevelWarn
		}
		s.log.Log(s.ctx, level, "replaying group coordinator partition; retrying", "err", err)
		select {
		case <-s.ctx.Done():
			return nil, s.ctx.Err()
		case <-time.After(s.opts.TickInterval):
		}
	}
}

func (s *shard) replay(mgr *group.Manager) error {
	offset := int64(0)
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		buf, end, err := s.opts.Writer.Read(s.ctx, s.partition, offset, 1<<20)
		if err != nil {
			return fmt.Errorf("reading from offset %d: %w", offset, err)
		}
		if offset >= end || len(buf) == 0 {
			return nil
		}
		next := offset
		now := s.opts.Clock.Now()
		_, err = records.Batches(buf, func(h records.Header, batch []byte) error {
			if h.IsControl() {
				next = h.LastOffset() + 1
				return nil
			}
			err := records.ForEachRecord(batch, func(r records.Record) error {
				if r.Offset(h) < offset || r.Offset(h) >= end {
					return nil
				}
				if err := mgr.Replay(now, r.Key, r.Value); err != nil {
					// A record we cannot decode is skipped, as Kafka's loader
					// skips unknown record types: refusing to load would keep
					// every group of the partition unavailable.
					s.log.Error("skipping undecodable offsets record", "offset", r.Offset(h), "err", err)
				}
				return nil
			})
			next = h.LastOffset() + 1
			return err
		})
		if err != nil {
			return fmt.Errorf("replaying from offset %d: %w", offset, err)
		}
		if next <= offset {
			return fmt.Errorf("replay made no progress at offset %d", offset)
		}
		offset = next
	}
}

// runWriter appends the loop's writes in order, coalescing what is queued
// into one batch, and hands the outcome back to the loop.
func (s *shard) runWriter() {
	defer close(s.writerDone)
	var pending []group.Write
	// failing tracks whether the last append failed, so that a partition
	// that cannot take writes (say NOT_ENOUGH_REPLICAS) is logged once at
	// warn when it starts and once when it recovers, not per write: groups
	// cannot complete a rebalance meanwhile, and that must be visible.
	failing := false
	for {
		if len(pending) == 0 {
			select {
			case <-s.ctx.Done():
				return
			case <-s.writes.notify:
				pending = s.writes.drain()
			}
			continue
		}
		if s.ctx.Err() != nil {
			return // stopped: nothing more is appended for this shard
		}
		n, batch, err := s.buildBatch(pending)
		if err == nil && batch != nil {
			err = s.append(batch)
		}
		switch {
		case err != nil && !failing && s.ctx.Err() == nil:
			failing = true
			s.log.Warn("group coordinator writes failing; members get retriable errors until they succeed", "err", err)
		case err != nil:
			s.log.Debug("group coordinator write failed", "err", err)
		case failing:
			failing = false
			s.log.Info("group coordinator writes succeed again")
		}
		done := pending[:n]
		pending = pending[n:]
		s.events.push(func(time.Time, *group.Manager) {
			for _, w := range done {
				if w.Done != nil {
					w.Done(err)
				}
			}
		})
		pending = append(pending, s.writes.drain()...)
	}
}

func (s *shard) append(batch []byte) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.WriteTimeout)
	defer cancel()
	_, err := s.opts.Writer.Append(ctx, s.partition, batch)
	if errors.Is(err, context.DeadlineExceeded) {
		return kerr.RequestTimedOut
	}
	if s.ctx.Err() != nil {
		return group.ErrNotCoordinator
	}
	return err
}

// buildBatch puts the first writes, up to MaxBatchBytes (at least one
// write), into one batch; it returns how many writes it took. The batch is
// nil when they hold no records (AfterWrites markers).
func (s *shard) buildBatch(writes []group.Write) (int, []byte, error) {
	b := records.NewBuilder(records.NonIdempotent(records.NoCompression))
	ts := s.opts.Clock.Now().UnixMilli()
	size, n := 0, 0
	for _, w := range writes {
		wsize := 0
		for _, r := range w.Records {
			wsize += len(r.Key) + len(r.Value) + 16
		}
		if n > 0 && size+wsize > s.opts.MaxBatchBytes {
			break
		}
		for _, r := range w.Records {
			b.Add(ts, r.Key, r.Value, nil)
		}
		size += wsize
		n++
	}
	if b.Count() == 0 {
		return n, nil, nil
	}
	batch, err := b.Build()
	if err != nil {
		return n, nil, fmt.Errorf("building offsets batch: %w", err)
	}
	return n, batch, nil
}
