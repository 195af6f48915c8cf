package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/latency"
)

// loadSpec is one run of the suite's Go load generator (the omb phase): Producers franz-go
// clients, each its own connection, sending 1 KiB values with random keys to one topic.
type loadSpec struct {
	Topic      string
	Partitions int
	Producers  int
	KeyRange   int
	Rate       float64 // records/s summed over the producers; 0: as fast as the broker takes them
	Warm       time.Duration
	Measure    time.Duration
	// EndToEnd runs a consumer of every partition beside the producers and records each
	// record's latency from its send (nanoseconds in the value's first 8 bytes, since
	// record timestamps are whole milliseconds) to its delivery to the consumer.
	EndToEnd bool
	// FromEnd starts that consumer at the end offsets listed before the producers start,
	// for a topic that already holds records (the partitions phase's); else at offset 0.
	FromEnd bool
	// ClientOpts are added to every producer client's options (a test's debug logger).
	ClientOpts []kgo.Opt
}

// loadResult is what a run measured over its measurement window.
type loadResult struct {
	Acked      int64 // records acknowledged inside the window
	Seconds    float64
	CPUSeconds float64           // broker CPU over the window
	E2E        latency.Histogram // records sent inside the window, as the consumer received them
}

// MBps is the acknowledged value bytes per second over the window.
func (r loadResult) MBps() float64 { return mb(r.Acked) / r.Seconds }

// window marks the measurement: acknowledgements and sends between start and end count.
type window struct {
	start, end atomic.Int64 // unix nanoseconds; end is 0 until the window closes
	acked      atomic.Int64 // acknowledged inside the window
	ackedAll   atomic.Int64 // acknowledged over the whole run, for the consumer's check
	firstErr   atomic.Pointer[error]
}

func (w *window) inside(ns int64) bool {
	s, e := w.start.Load(), w.end.Load()
	return s != 0 && ns >= s && (e == 0 || ns < e)
}

// runLoad runs spec against b: warm-up, then the measured window (broker CPU sampled at
// both ends), then the producers stop and, with EndToEnd, the consumer must receive every
// acknowledged record within 60 s or the run fails.
func runLoad(ctx context.Context, b target, spec loadSpec) (loadResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var w window
	var cons *e2eConsumer
	if spec.EndToEnd {
		var err error
		if cons, err = startE2EConsumer(ctx, b.Bootstrap(), spec.Topic, spec.Partitions, spec.FromEnd, &w); err != nil {
			return loadResult{}, err
		}
		defer cons.close()
	}
	clients, err := readyProducers(ctx, b.Bootstrap(), spec, &w)
	if err != nil {
		return loadResult{}, err
	}
	prodCtx, stopProducers := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			produceLoop(prodCtx, cl, spec, uint64(i), &w)
		}()
	}
	res, err := measureWindow(ctx, b, spec, &w)
	stopProducers()
	wg.Wait()
	if err != nil {
		return res, err
	}
	if ep := w.firstErr.Load(); ep != nil {
		return res, fmt.Errorf("produce: %w", *ep)
	}
	if cons != nil {
		if err := cons.drain(ctx, w.ackedAll.Load(), 60*time.Second); err != nil {
			return res, err
		}
		res.E2E = cons.hist()
	}
	return res, nil
}

// readyProducers makes n producer clients and has each produce one record synchronously,
// all at once, so connecting, metadata and InitProducerId are done before the warm-up
// starts (as OMB creates its producers before a test) and a broker that cannot start 32
// producers fails here, saying so, rather than as an empty measurement.
func readyProducers(ctx context.Context, bootstrap string, spec loadSpec, w *window) ([]*kgo.Client, error) {
	n := spec.Producers
	clients := make([]*kgo.Client, 0, n)
	for range n {
		opts := append([]kgo.Opt{kgo.SeedBrokers(seeds(bootstrap)...), kgo.DefaultProduceTopic(spec.Topic),
			kgo.ProducerLinger(time.Millisecond), kgo.ProducerBatchMaxBytes(128 << 10),
			// The Java producer's default; franz-go's is snappy, which would shrink the
			// generator's repeated values to almost nothing on the wire.
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			// The Java producer's (OMB's client's) max.request.size and buffer.memory.
			// franz-go's defaults (100 MiB requests, 50,000 records buffered) had 32
			// producers at max rate send 10 MB requests, which Kafka handles one at a
			// time per connection; on a loaded machine a 4 s window saw none answered.
			kgo.BrokerMaxWriteBytes(1 << 20), kgo.MaxBufferedBytes(32 << 20)}, spec.ClientOpts...)
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			closeAll(clients)
			return nil, fmt.Errorf("producer client: %w", err)
		}
		clients = append(clients, cl)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	t0 := time.Now()
	errs := make(chan error, n)
	for _, cl := range clients {
		go func() {
			value := make([]byte, recordSize)
			binary.BigEndian.PutUint64(value, uint64(time.Now().UnixNano()))
			errs <- cl.ProduceSync(ctx, &kgo.Record{Key: []byte("ready"), Value: value}).FirstErr()
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		closeAll(clients)
		return nil, fmt.Errorf("starting %d producers (one record each, %s): %w", n, time.Since(t0).Round(time.Millisecond), first)
	}
	w.ackedAll.Add(int64(n))
	return clients, nil
}

func closeAll(clients []*kgo.Client) {
	for _, cl := range clients {
		cl.Close()
	}
}

// measureWindow waits out the warm-up, then opens and closes the window, sampling the
// broker's CPU at both ends.
func measureWindow(ctx context.Context, b target, spec loadSpec, w *window) (loadResult, error) {
	if err := sleepCtx(ctx, spec.Warm); err != nil {
		return loadResult{}, err
	}
	cpu0, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return loadResult{}, err
	}
	t0 := time.Now()
	w.start.Store(t0.UnixNano())
	if err := sleepCtx(ctx, spec.Measure); err != nil {
		return loadResult{}, err
	}
	t1 := time.Now()
	w.end.Store(t1.UnixNano())
	cpu1, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return loadResult{}, err
	}
	res := loadResult{Acked: w.acked.Load(), Seconds: t1.Sub(t0).Seconds(), CPUSeconds: cpu1 - cpu0}
	if res.Acked == 0 {
		return res, errors.New("no record acknowledged in the measurement window (broker stalled)")
	}
	return res, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// produceLoop sends records until ctx ends, paced to spec.Rate/Producers records/s when
// a rate is set (records due so far by the clock, so a late wake-up catches up).
func produceLoop(ctx context.Context, cl *kgo.Client, spec loadSpec, id uint64, w *window) {
	rng := rand.New(rand.NewPCG(id+1, uint64(time.Now().UnixNano())))
	perProducer := spec.Rate / float64(spec.Producers)
	// Random capital letters, as producer-perf-test's --record-size values.
	filler := make([]byte, recordSize-8)
	for i := range filler {
		filler[i] = byte('A' + rng.IntN(26))
	}
	start := time.Now()
	for sent := int64(0); ctx.Err() == nil; sent++ {
		if perProducer > 0 {
			if wait := time.Until(start.Add(time.Duration(float64(sent) / perProducer * 1e9))); wait > 0 {
				if sleepCtx(ctx, wait) != nil {
					break
				}
			}
		}
		value := make([]byte, recordSize)
		copy(value[8:], filler)
		binary.BigEndian.PutUint64(value, uint64(time.Now().UnixNano()))
		rec := &kgo.Record{Key: strconv.AppendInt(nil, rng.Int64N(int64(spec.KeyRange)), 10), Value: value}
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				// Records cut short by the end of the run are not the broker's failures.
				if ctx.Err() == nil {
					w.firstErr.CompareAndSwap(nil, &err)
				}
				return
			}
			w.ackedAll.Add(1)
			if w.inside(time.Now().UnixNano()) {
				w.acked.Add(1)
			}
		})
	}
	// What was handed to the client before the stop is delivered, so the consumer's
	// count check compares with everything acknowledged.
	flushCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_ = cl.Flush(flushCtx)
}
