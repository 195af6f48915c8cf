package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/latency"
)

// e2eConsumer reads every partition of the load topic from offset 0 (the omb phase's topic
// is new) or from the end offsets listed before the producers start (the partitions phase's
// topic already holds its produce run; reading that first would measure a catch-up read)
// while the producers write, and records the end-to-end latency of the records sent
// inside the measurement window.
type e2eConsumer struct {
	cl       *kgo.Client
	w        *window
	mu       sync.Mutex
	h        latency.Histogram
	received atomic.Int64
	stop     context.CancelFunc
	done     chan error
}

// startE2EConsumer assigns every partition at offset 0, or with fromEnd at its end offset
// listed now, with the Java consumer's fetch defaults (OMB's Kafka driver keeps them): 50
// MiB per fetch, 1 MiB per partition, 500 ms max wait; with fetch.min.bytes 1 both brokers
// answer as soon as data is there.
func startE2EConsumer(ctx context.Context, bootstrap, topic string, partitions int, fromEnd bool, w *window) (*e2eConsumer, error) {
	var ends map[int32]int64
	if fromEnd {
		var err error
		if ends, err = endOffsets(ctx, bootstrap, topic); err != nil {
			return nil, err
		}
	}
	assign, err := e2eAssign(partitions, ends)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}),
		kgo.FetchMaxBytes(50<<20), kgo.FetchMaxPartitionBytes(1<<20), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("consumer client: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	c := &e2eConsumer{cl: cl, w: w, stop: stop, done: make(chan error, 1)}
	go func() { c.done <- c.loop(ctx) }()
	return c, nil
}

// e2eAssign is the consumer's start offset for every partition: 0 without ends, else the
// end offset listed, exactly (kgo's AtEnd would be resolved at the first fetch, after the
// producers' first records, which the consumer would then miss and the drain count lack).
func e2eAssign(partitions int, ends map[int32]int64) (map[int32]kgo.Offset, error) {
	assign := make(map[int32]kgo.Offset, partitions)
	for p := range int32(partitions) {
		at := int64(0)
		if ends != nil {
			end, ok := ends[p]
			if !ok {
				return nil, fmt.Errorf("no end offset listed for partition %d", p)
			}
			at = end
		}
		assign[p] = kgo.NewOffset().At(at)
	}
	return assign, nil
}

func (c *e2eConsumer) loop(ctx context.Context) error {
	for {
		fetches := c.cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err := fetchErrors(fetches); err != nil {
			return err
		}
		now := time.Now().UnixNano()
		c.mu.Lock()
		fetches.EachRecord(func(r *kgo.Record) {
			if len(r.Value) < 8 {
				return
			}
			sent := int64(binary.BigEndian.Uint64(r.Value))
			if c.w.inside(sent) {
				c.h.Record(time.Duration(now - sent))
			}
			c.received.Add(1)
		})
		c.mu.Unlock()
	}
}

// fetchErrors joins a poll's partition errors, if any.
func fetchErrors(f kgo.Fetches) error {
	var first error
	f.EachError(func(t string, p int32, err error) {
		if first == nil {
			first = fmt.Errorf("fetch %s-%d: %w", t, p, err)
		}
	})
	return first
}

// drain waits until the consumer has received want records, or fails after timeout: an
// acknowledged record the consumer never sees is a lost record, not a slow one.
func (c *e2eConsumer) drain(ctx context.Context, want int64, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for c.received.Load() < want {
		select {
		case err := <-c.done:
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("consumer stopped after %d of %d acknowledged records: %v", c.received.Load(), want, err)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("consumer received %d of %d acknowledged records within %s", c.received.Load(), want, timeout)
		}
	}
	return nil
}

func (c *e2eConsumer) hist() latency.Histogram {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

func (c *e2eConsumer) close() {
	c.stop()
	c.cl.Close()
}
