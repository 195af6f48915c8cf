package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/latency"
)

// partCounts are the records acknowledged to each partition of the phase's topic.
type partCounts struct {
	n []atomic.Int64
}

func newPartCounts(partitions int) *partCounts {
	return &partCounts{n: make([]atomic.Int64, partitions)}
}

func (c *partCounts) ack(p int32) { c.n[p].Add(1) }

func (c *partCounts) snapshot() []int64 {
	out := make([]int64, len(c.n))
	for i := range c.n {
		out[i] = c.n[i].Load()
	}
	return out
}

// partsResult is what the produce to every partition measured, first send to last ack.
type partsResult struct {
	Acked      int64
	Seconds    float64
	CPUSeconds float64
	Ack        latency.Histogram
}

func (r partsResult) MBps() float64 { return mb(r.Acked) / r.Seconds }

// partsStep is the most partitions one CreateTopics or CreatePartitions request of the
// phase asks for. Both controllers bound the metadata records of one request to 10,000 (a
// new topic's record plus one per partition), so Kafka 4.4.0 refuses a 10,000-partition
// CreateTopics (POLICY_VIOLATION, as Sluice does) and the topic is grown to its
// size with CreatePartitions, as an operator has to.
const partsStep = 5000

// partsSteps are the partition counts the topic has after each request: the CreateTopics
// first, then each CreatePartitions.
func partsSteps(n int) []int {
	var out []int
	for have := 0; have < n; {
		have = min(have+partsStep, n)
		out = append(out, have)
	}
	return out
}

// createAndTouch creates topic with n partitions (RF 1, in steps of partsStep), waits until
// every partition has a leader, and produces one record to each; it returns the time from
// the CreateTopics request to the last of those acknowledgements.
func createAndTouch(ctx context.Context, b target, topic string, n int, acked *partCounts) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(b.Bootstrap())...))
	if err != nil {
		return 0, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(int32((5 * time.Minute).Milliseconds()))
	t0 := time.Now()
	if err := createInSteps(ctx, adm, topic, n); err != nil {
		return 0, err
	}
	for {
		md, err := adm.Metadata(ctx, topic)
		if err == nil {
			if td, ok := md.Topics[topic]; ok && td.Err == nil && len(td.Partitions) == n && allLedInSync(td, 1) {
				break
			}
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return 0, fmt.Errorf("topic %s: partitions without a leader: %w", topic, err)
		}
	}
	if err := produceEach(ctx, b.Bootstrap(), topic, n, acked); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

func createInSteps(ctx context.Context, adm *kadm.Client, topic string, n int) error {
	for i, size := range partsSteps(n) {
		if i == 0 {
			resp, err := adm.CreateTopic(ctx, int32(size), 1, nil, topic)
			if err == nil && resp.Err != nil {
				err = fmt.Errorf("%w (%s)", resp.Err, resp.ErrMessage)
			}
			if err != nil {
				return fmt.Errorf("create topic %s with %d partitions: %w", topic, size, err)
			}
			continue
		}
		resp, err := adm.UpdatePartitions(ctx, size, topic)
		if err == nil {
			if r := resp[topic]; r.Err != nil {
				err = fmt.Errorf("%w (%s)", r.Err, r.ErrMessage)
			}
		}
		if err != nil {
			return fmt.Errorf("grow topic %s to %d partitions: %w", topic, size, err)
		}
	}
	return nil
}

// touchClient produces to partitions chosen by the caller, retrying every 10 ms and
// refreshing metadata as often, so a restarting broker is found as soon as it serves.
func touchClient(bootstrap string) (*kgo.Client, error) {
	return kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.MetadataMinAge(10*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 10 * time.Millisecond }))
}

// produceEach produces one record to every partition of topic and waits for all the
// acknowledgements.
func produceEach(ctx context.Context, bootstrap, topic string, n int, acked *partCounts) error {
	cl, err := touchClient(bootstrap)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	return produceEachWith(ctx, cl, topic, n, acked)
}

func produceEachWith(ctx context.Context, cl *kgo.Client, topic string, n int, acked *partCounts) error {
	var wg sync.WaitGroup
	var first atomic.Pointer[error]
	for p := range n {
		wg.Add(1)
		rec := &kgo.Record{Topic: topic, Partition: int32(p), Value: []byte("touch")}
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			defer wg.Done()
			if err != nil {
				first.CompareAndSwap(nil, &err)
				return
			}
			acked.ack(r.Partition)
		})
	}
	wg.Wait()
	if ep := first.Load(); ep != nil {
		return fmt.Errorf("one record to each of %d partitions: %w", n, *ep)
	}
	return nil
}

// restartToProduces relaunches b and returns the time from exec to an acknowledged record
// on partition 0 and to one more acknowledged on every partition.
func restartToProduces(ctx context.Context, b broker, topic string, n int, acked *partCounts) (first, all time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	t0 := time.Now()
	if err := b.Relaunch(); err != nil {
		return 0, 0, err
	}
	if err := waitPort(ctx, b); err != nil {
		return 0, 0, err
	}
	cl, err := touchClient(b.Bootstrap())
	if err != nil {
		return 0, 0, fmt.Errorf("client: %w", err)
	}
	defer cl.Close()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 0, Value: []byte("first after restart")}).First()
	if err != nil {
		return 0, 0, fmt.Errorf("first produce after restart: %w", err)
	}
	first = time.Since(t0)
	acked.ack(r.Partition)
	if err := produceEachWith(ctx, cl, topic, n, acked); err != nil {
		return 0, 0, fmt.Errorf("after restart: %w", err)
	}
	return first, time.Since(t0), nil
}

// waitPort waits until the broker's client port accepts a connection.
func waitPort(ctx context.Context, b broker) error {
	for {
		conn, err := net.DialTimeout("tcp", b.Bootstrap(), time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if !processAlive(b.PID()) {
			return errors.New("broker exited during restart")
		}
		if err := sleepCtx(ctx, 5*time.Millisecond); err != nil {
			return fmt.Errorf("broker port %s never opened: %w", b.Bootstrap(), err)
		}
	}
}

// producePartitions sends cfg.Bytes of 1 KiB values with random keys from cfg.Producers
// clients as fast as the broker acknowledges them (stopping early after cfg.MaxRun), and
// measures throughput, broker CPU and ack latency over the whole run.
func producePartitions(ctx context.Context, b broker, topic string, cfg partsConfig, acked *partCounts) (partsResult, error) {
	clients := make([]*kgo.Client, 0, cfg.Producers)
	defer func() { closeAll(clients) }()
	for range cfg.Producers {
		cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(b.Bootstrap())...), kgo.DefaultProduceTopic(topic),
			kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(partsLinger), kgo.ProducerBatchMaxBytes(partsBatch),
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.BrokerMaxWriteBytes(1<<20), kgo.MaxBufferedBytes(32<<20))
		if err != nil {
			return partsResult{}, fmt.Errorf("producer client: %w", err)
		}
		clients = append(clients, cl)
	}
	perProducer := cfg.Bytes / recordSize / int64(cfg.Producers)
	deadline := time.Now().Add(cfg.MaxRun)
	cpu0, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return partsResult{}, err
	}
	t0 := time.Now()
	hists := make([]latency.Histogram, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = partsProducer(ctx, cl, uint64(i), perProducer, deadline, acked, &hists[i])
		}()
	}
	wg.Wait()
	secs := time.Since(t0).Seconds()
	cpu1, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return partsResult{}, err
	}
	if err := errors.Join(errs...); err != nil {
		return partsResult{}, err
	}
	res := partsResult{Seconds: secs, CPUSeconds: cpu1 - cpu0}
	for i := range hists {
		res.Ack.Merge(&hists[i])
		res.Acked += int64(hists[i].Count())
	}
	return res, nil
}

// partsProducer sends up to n records (until deadline) and waits for all of them; any
// failed record fails the run.
func partsProducer(ctx context.Context, cl *kgo.Client, id uint64, n int64, deadline time.Time, acked *partCounts, h *latency.Histogram) error {
	rng := rand.New(rand.NewPCG(id+1, uint64(time.Now().UnixNano())))
	filler := make([]byte, recordSize)
	for i := range filler {
		filler[i] = byte('A' + rng.IntN(26))
	}
	var mu sync.Mutex
	var first atomic.Pointer[error]
	for i := int64(0); i < n && ctx.Err() == nil && first.Load() == nil; i++ {
		if i%1024 == 0 && time.Now().After(deadline) {
			break
		}
		value := make([]byte, recordSize)
		copy(value, filler)
		binary.BigEndian.PutUint64(value, uint64(i))
		rec := &kgo.Record{Key: strconv.AppendInt(nil, rng.Int64N(partsKeyRange), 10), Value: value}
		sent := time.Now()
		cl.Produce(ctx, rec, func(r *kgo.Record, err error) {
			if err != nil {
				first.CompareAndSwap(nil, &err)
				return
			}
			d := time.Since(sent)
			acked.ack(r.Partition)
			mu.Lock()
			h.Record(d)
			mu.Unlock()
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	if ep := first.Load(); ep != nil {
		return fmt.Errorf("produce: %w", *ep)
	}
	return nil
}
