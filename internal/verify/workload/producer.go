package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// Producer sends unique values "<process>-<n>" to chosen partitions and
// records each send's invocation (Send) and outcome (Ack, Fail or Info,
// see Classify). Drain settles the sends still open when the run ends.
type Producer struct {
	Process string
	Client  *kgo.Client
	Topic   string
	Rec     *history.Recorder
	cfg     Config

	mu sync.Mutex
	n  int64
	// Invariant: open holds exactly the sends recorded as Send and not
	// yet given an outcome; an outcome is recorded by whoever removes the
	// send from it (the promise or Drain), so each send ends once.
	open map[string]openSend
	// done is signalled (without blocking) whenever open shrinks.
	done chan struct{}
}

type openSend struct {
	partition int32
	at        time.Time
}

// NewProducer is an idempotent acks=all producer (kgo's defaults) that
// sends to explicit partitions, with cfg's delivery timeout; opts are
// added to its client's.
func NewProducer(cfg Config, process string, rec *history.Recorder, opts ...kgo.Opt) (*Producer, error) {
	cfg = cfg.withDefaults()
	all := append([]kgo.Opt{
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(cfg.DeliveryTimeout),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(maxBuffered(cfg)),
	}, opts...)
	cl, err := NewClient(cfg, all...)
	if err != nil {
		return nil, fmt.Errorf("producer %s: %w", process, err)
	}
	return &Producer{Process: process, Client: cl, Topic: cfg.Topic, Rec: rec, cfg: cfg,
		open: make(map[string]openSend), done: make(chan struct{}, 1)}, nil
}

// maxBuffered is room for twice what one producer sends in a delivery
// timeout, so Produce (which blocks when the buffer is full, and whose
// context is not the run's) does not hold the send loop past the run's end
// while the cluster is unavailable.
func maxBuffered(cfg Config) int {
	perProducer := float64(cfg.Rate) / float64(cfg.Producers) * cfg.DeliveryTimeout.Seconds()
	return max(10000, int(2*perProducer))
}

// NextValue returns the producer's next unique value.
func (p *Producer) NextValue() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	v := fmt.Sprintf("%s-%d", p.Process, p.n)
	p.n++
	return v
}

// Send records a Send of a new value to partition and produces it; the
// promise records its outcome. It returns the value.
func (p *Producer) Send(partition int32) string {
	v := p.NextValue()
	p.mu.Lock()
	p.open[v] = openSend{partition: partition, at: p.cfg.Clock.Now()}
	p.mu.Unlock()
	p.Rec.Record(history.Op{Kind: history.Send, Process: p.Process, Topic: p.Topic,
		Partition: partition, Offset: -1, Value: v})
	// The record's context is not the run's: ending the run must not turn
	// sends already under way into cancellations. The delivery timeout
	// bounds them instead.
	r := &kgo.Record{Topic: p.Topic, Partition: partition, Value: []byte(v)}
	p.Client.Produce(context.Background(), r, func(r *kgo.Record, err error) {
		p.settle(v, r, err)
	})
	return v
}

// settle records the outcome of the send of v unless Drain already did.
func (p *Producer) settle(v string, r *kgo.Record, err error) {
	p.mu.Lock()
	s, ok := p.open[v]
	delete(p.open, v)
	p.mu.Unlock()
	if !ok {
		return
	}
	select {
	case p.done <- struct{}{}:
	default:
	}
	op := history.Op{Kind: Classify(err), Process: p.Process, Topic: p.Topic,
		Partition: s.partition, Offset: -1, Value: v, Latency: p.cfg.Clock.Now().Sub(s.at)}
	if err != nil {
		op.Err = err.Error()
	} else {
		op.Offset = r.Offset
	}
	p.Rec.Record(op)
}

// Run sends round-robin over partitions, starting at first, one send
// every interval, until ctx is done.
func (p *Producer) Run(ctx context.Context, partitions, first int32, interval time.Duration) {
	t := p.cfg.Clock.NewTicker(interval)
	defer t.Stop()
	next := first % partitions
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		p.Send(next)
		next = (next + 1) % partitions
	}
}

// Open is the number of sends without an outcome.
func (p *Producer) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.open)
}

// Drain waits up to timeout for the open sends' outcomes, then records
// Info for each still open, and closes the client.
func (p *Producer) Drain(timeout time.Duration) {
	deadline := p.cfg.Clock.NewTimer(timeout)
	defer deadline.Stop()
	for p.Open() > 0 {
		select {
		case <-p.done:
		case <-deadline.C():
			p.giveUp()
			p.Client.Close()
			return
		}
	}
	p.Client.Close()
}

// giveUp records Info for every open send: the run is over and nobody
// knows whether they were written.
func (p *Producer) giveUp() {
	p.mu.Lock()
	open := p.open
	p.open = make(map[string]openSend)
	p.mu.Unlock()
	for v, s := range open {
		p.Rec.Record(history.Op{Kind: history.Info, Process: p.Process, Topic: p.Topic,
			Partition: s.partition, Offset: -1, Value: v, Err: "no outcome when the run ended"})
	}
}

// runProducers runs cfg.Producers producers ("producer-1", ...) at
// cfg.Rate sends per second in total until ctx is done, then drains them.
func runProducers(ctx context.Context, cfg Config, rec *history.Recorder) error {
	interval := time.Duration(int64(time.Second) * int64(cfg.Producers) / int64(cfg.Rate))
	if interval <= 0 {
		interval = time.Microsecond
	}
	var ps []*Producer
	for i := range cfg.Producers {
		p, err := NewProducer(cfg, fmt.Sprintf("producer-%d", i+1), rec)
		if err != nil {
			for _, p := range ps {
				p.Client.Close()
			}
			return err
		}
		ps = append(ps, p)
	}
	var wg sync.WaitGroup
	for i, p := range ps {
		wg.Go(func() { p.Run(ctx, cfg.Partitions, int32(i), interval) })
	}
	wg.Wait()
	for _, p := range ps {
		wg.Go(func() { p.Drain(cfg.DrainTimeout) })
	}
	wg.Wait()
	return nil
}
