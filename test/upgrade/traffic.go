package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ack is where the cluster said a record went.
type ack struct {
	partition int32
	offset    int64
}

// producer writes records keyed by a sequence number with an idempotent
// acks=all kgo client and remembers each acknowledged one. Every promise
// ends either acknowledged or in failed; none is dropped.
type producer struct {
	client *kgo.Client
	tally  *errTally
	topic  string
	every  time.Duration

	mu       sync.Mutex
	acked    map[int64]ack
	failed   map[string]int // final errors by text
	sent     int64
	inflight sync.WaitGroup
}

// recordKey and recordValue carry the sequence number twice, so the audit
// can tell a record that was mangled from one that is missing.
func recordKey(seq int64) string   { return fmt.Sprintf("k%09d", seq) }
func recordValue(seq int64) string { return fmt.Sprintf("upgrade-test seq=%d", seq) }

// parseKey returns the sequence number of a key, false when it is not one.
func parseKey(key []byte) (int64, bool) {
	s, ok := strings.CutPrefix(string(key), "k")
	if !ok {
		return 0, false
	}
	seq, err := strconv.ParseInt(s, 10, 64)
	return seq, err == nil
}

func newProducer(seeds []string, topic string, every time.Duration, tally *errTally) (*producer, error) {
	client, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), // kgo's default, stated: the test is about acks=all
		kgo.StopProducerOnDataLossDetected(),
		// A record the cluster cannot take within a minute fails loudly
		// instead of leaving the test waiting.
		kgo.RecordDeliveryTimeout(time.Minute),
		kgo.WithLogger(tally),
	)
	if err != nil {
		return nil, fmt.Errorf("producer client: %w", err)
	}
	return &producer{client: client, tally: tally, topic: topic, every: every,
		acked: make(map[int64]ack), failed: make(map[string]int)}, nil
}

// run produces one record every p.every until ctx ends, then waits for
// every outstanding promise.
func (p *producer) run(ctx context.Context) {
	tick := time.NewTicker(p.every)
	defer tick.Stop()
	for seq := int64(0); ; seq++ {
		select {
		case <-ctx.Done():
			p.inflight.Wait()
			return
		case <-tick.C:
		}
		p.mu.Lock()
		p.sent++
		p.mu.Unlock()
		p.inflight.Add(1)
		rec := &kgo.Record{Key: []byte(recordKey(seq)), Value: []byte(recordValue(seq))}
		// The client's own context: stopping the producer must not cancel
		// records already handed to it.
		p.client.Produce(context.Background(), rec, func(r *kgo.Record, err error) {
			defer p.inflight.Done()
			p.done(seq, r, err)
		})
	}
}

func (p *producer) done(seq int64, r *kgo.Record, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.failed[err.Error()]++
		return
	}
	p.acked[seq] = ack{r.Partition, r.Offset}
}

// ackedCount is the number of acknowledged records so far.
func (p *producer) ackedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.acked)
}

// consumer reads the topic in a consumer group and counts each sequence
// number it sees (a rebalance may deliver a record twice: at least once).
type consumer struct {
	client *kgo.Client
	tally  *errTally

	mu   sync.Mutex
	seen map[int64]int
	bad  []string // records that are not the producer's
}

func newConsumer(seeds []string, topic, group string, tally *errTally) (*consumer, error) {
	client, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumerGroup(group),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.WithLogger(tally),
	)
	if err != nil {
		return nil, fmt.Errorf("consumer client: %w", err)
	}
	return &consumer{client: client, tally: tally, seen: make(map[int64]int)}, nil
}

// run polls until ctx ends; fetch errors reach the tally through the
// client's log, and are counted here too.
func (c *consumer) run(ctx context.Context) {
	for {
		fetches := c.client.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		fetches.EachError(func(_ string, _ int32, err error) {
			c.tally.Log(kgo.LogLevelWarn, "fetch error returned by PollFetches", "err", err)
		})
		fetches.EachRecord(c.record)
	}
}

func (c *consumer) record(r *kgo.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seq, ok := parseKey(r.Key)
	if !ok || string(r.Value) != recordValue(seq) {
		c.bad = append(c.bad, fmt.Sprintf("p%d@%d key %q value %q", r.Partition, r.Offset, r.Key, r.Value))
		return
	}
	c.seen[seq]++
}

// missing counts the acknowledged records the consumer has not seen.
func (c *consumer) missing(acked map[int64]ack) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for seq := range acked {
		if c.seen[seq] == 0 {
			n++
		}
	}
	return n
}
