package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/records"
)

// shard runs one partition (Kafka's CoordinatorContext): an event loop
// that owns the partition's Shard, and a writer goroutine that appends what
// the Shard emits.
type shard[S Shard] struct {
	opts      *Options[S]
	partition int32
	epoch     int32
	log       *slog.Logger

	loaded atomic.Bool
	// events are closures run on the loop with the current time and the
	// partition's state machine.
	events *queue[func(time.Time, S)]
	// writes go from the loop to the writer; completions come back to the
	// loop through events.
	writes *queue[Write]

	ctx    context.Context
	cancel context.CancelFunc
	// done is closed when the loop has stopped; callers waiting for a reply
	// give up then (NOT_COORDINATOR).
	done       chan struct{}
	writerDone chan struct{}
}

func newShard[S Shard](opts *Options[S], partition, epoch int32) *shard[S] {
	ctx, cancel := context.WithCancel(context.Background())
	s := &shard[S]{
		opts: opts, partition: partition, epoch: epoch,
		log:    opts.Logger.With("partition", partition, "leader_epoch", epoch),
		events: newQueue[func(time.Time, S)](), writes: newQueue[Write](),
		ctx: ctx, cancel: cancel, done: make(chan struct{}), writerDone: make(chan struct{}),
	}
	go s.runWriter()
	go s.run()
	return s
}

// stop ends the shard and waits for its goroutines.
func (s *shard[S]) stop() {
	s.cancel()
	<-s.done
	<-s.writerDone
}

// submit queues fn for the loop, or returns the code to answer when the
// shard cannot serve: stopped (NOT_COORDINATOR) or, unless afterLoad,
// loading. With afterLoad fn waits in the queue for the load's end.
func (s *shard[S]) submit(fn func(now time.Time, sh S), afterLoad bool) int16 {
	select {
	case <-s.done:
		return kerr.NotCoordinator.Code
	default:
	}
	if !afterLoad && !s.loaded.Load() {
		return kerr.CoordinatorLoadInProgress.Code
	}
	s.events.push(fn)
	return 0
}

func (s *shard[S]) run() {
	defer close(s.done)
	sh, err := s.load()
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Error("loading "+s.opts.Name+" partition", "err", err)
		}
		return
	}
	s.loaded.Store(true)
	s.log.Debug(s.opts.Name+" partition loaded", sh.Loaded(s.opts.Clock.Now())...)
	// The loop wakes as often as the Shard's NextTick asks (every
	// TickInterval while timers run), so idle partitions cost nothing.
	timer := s.opts.Clock.NewTimer(s.opts.TickInterval)
	defer timer.Stop()
	for {
		select {
		case <-s.ctx.Done():
			sh.Shutdown(kerr.NotCoordinator.Code)
			return
		case <-s.events.notify:
			now := s.opts.Clock.Now()
			for _, fn := range s.events.drain() {
				fn(now, sh)
			}
		case <-timer.C():
		}
		ticked := s.opts.Clock.Now()
		sh.Tick(ticked)
		for _, w := range sh.TakeWrites() {
			s.writes.push(w)
		}
		// Counted from the Tick, so that time passing meanwhile (a manual
		// clock moved by a test) shortens the wait instead of being lost.
		timer.Reset(sh.NextTick(s.opts.TickInterval) - clock.Since(s.opts.Clock, ticked))
	}
}

// load replays the partition from its start up to its log end offset,
// retrying while the partition is not readable yet (the replica manager may
// learn of its leadership after us). It returns the Shard once Loaded.
func (s *shard[S]) load() (S, error) {
	for attempt := 0; ; attempt++ {
		sh := s.opts.NewShard(s.partition, s.epoch, s.opts.Clock.Now())
		err := s.replay(sh)
		if err == nil {
			return sh, nil
		}
		level := slog.LevelDebug
		if attempt == 0 {
			level = slog.LevelWarn
		}
		s.log.Log(s.ctx, level, "replaying "+s.opts.Name+" partition; retrying", "err", err)
		if err := s.sleep(s.opts.TickInterval); err != nil {
			var zero S
			return zero, err
		}
	}
}

// sleep waits d on the clock, or until the shard stops.
func (s *shard[S]) sleep(d time.Duration) error {
	t := s.opts.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.ctx.Done():
		return s.ctx.Err()
	case <-t.C():
		return nil
	}
}

func (s *shard[S]) replay(sh S) error {
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
			next = h.LastOffset() + 1
			return s.replayBatch(sh, now, h, batch, offset, end)
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

// replayBatch hands the records of one batch in [from, end) to the Shard,
// with the batch's producer; a control batch is handed over as its
// transaction marker.
func (s *shard[S]) replayBatch(sh S, now time.Time, h records.Header, batch []byte, from, end int64) error {
	rb := ReplayBatch{ProducerID: h.ProducerID, ProducerEpoch: h.ProducerEpoch, Transactional: h.IsTransactional(), Control: h.IsControl()}
	return records.ForEachRecord(batch, func(r records.Record) error {
		offset := r.Offset(h)
		if offset < from || offset >= end {
			return nil
		}
		key, value := r.Key, r.Value
		if rb.Control {
			k, err := records.ParseControlKey(r.Key)
			if err != nil || (k.Type != records.ControlCommit && k.Type != records.ControlAbort) {
				s.log.Error("skipping a control record that is no transaction marker", "offset", offset, "type", k.Type, "err", err)
				return nil
			}
			rb.Commit, key, value = k.Type == records.ControlCommit, nil, nil
		}
		if err := sh.Replay(now, rb, offset, key, value); err != nil {
			// Skipped, as Kafka's loader skips unknown record types.
			s.log.Error("skipping undecodable "+s.opts.Topic+" record", "offset", offset, "err", err)
		}
		return nil
	})
}
