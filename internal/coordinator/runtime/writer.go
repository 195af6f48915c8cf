package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/records"
)

// runWriter appends the loop's writes in order, coalescing what is queued
// into one batch, and hands the outcome back to the loop.
func (s *shard[S]) runWriter() {
	defer close(s.writerDone)
	var pending []Write
	// failing tracks whether the last append failed, so that a partition
	// that cannot take writes (say NOT_ENOUGH_REPLICAS) is logged once at
	// warn when it starts and once when it recovers, not per write: the
	// state machine cannot make progress meanwhile (groups cannot complete
	// a rebalance), and that must be visible.
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
			s.log.Warn(s.opts.Name+" writes failing; clients get retriable errors until they succeed", "err", err)
		case err != nil:
			s.log.Debug(s.opts.Name+" write failed", "err", err)
		case failing:
			failing = false
			s.log.Info(s.opts.Name + " writes succeed again")
		}
		done := pending[:n]
		pending = pending[n:]
		s.events.push(func(time.Time, S) {
			for _, w := range done {
				if w.Done != nil {
					w.Done(err)
				}
			}
		})
		pending = append(pending, s.writes.drain()...)
	}
}

func (s *shard[S]) append(batch []byte) error {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.WriteTimeout)
	defer cancel()
	_, err := s.opts.Writer.Append(ctx, s.partition, batch)
	if errors.Is(err, context.DeadlineExceeded) {
		return kerr.RequestTimedOut
	}
	if s.ctx.Err() != nil {
		return fmt.Errorf("%s shard of partition %d stopped: %w", s.opts.Name, s.partition, kerr.NotCoordinator)
	}
	return err
}

// buildBatch puts the first writes, up to MaxBatchBytes (at least one
// write), into one batch; it returns how many writes it took. The batch is
// nil when they hold no records (markers that only wait for the writes
// before them). A transactional write goes alone, in a batch of its
// producer, as Kafka's runtime flushes around one: its records must stay
// apart from the plain ones its marker does not decide.
func (s *shard[S]) buildBatch(writes []Write) (int, []byte, error) {
	opts := records.NonIdempotent(records.NoCompression)
	if p := writes[0].Transaction; p != nil {
		// Base sequence 0, as Kafka's coordinator writes: the partition
		// checks a coordinator's epochs, not its sequences.
		opts.ProducerID, opts.ProducerEpoch, opts.BaseSequence, opts.Transactional = p.ID, p.Epoch, 0, true
		writes = writes[:1]
	}
	b := records.NewBuilder(opts)
	ts := s.opts.Clock.Now().UnixMilli()
	size, n := 0, 0
	for _, w := range writes {
		wsize := 0
		for _, r := range w.Records {
			wsize += len(r.Key) + len(r.Value) + 16
		}
		if n > 0 && (size+wsize > s.opts.MaxBatchBytes || w.Transaction != nil) {
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
		return n, nil, fmt.Errorf("building %s batch: %w", s.opts.Topic, err)
	}
	return n, batch, nil
}
