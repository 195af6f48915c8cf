package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// The transactional workload (Txn): Jepsen's Kafka workload with
// transactions. cfg.Producers transactional producers ("txn-1", ...,
// transactional id "verify-<topic>-txn-<i>") each run one transaction at a
// time writing 2-6 unique values to 2-3 different partitions, committing
// about 80% of them and aborting the rest (drawn from cfg.Seed), while
// cfg.Consumers read_committed members of cfg.Group ("txn-consumer-1",
// ...) read them back. The history holds, per transaction Txn
// ("<process>-t<k>"): TxnBegin, a Send per value (Txn set) and its Ack,
// Fail or Info, then TxnCommit, TxnAbort, or Info with Txn set and no
// Value when the commit was asked for and its outcome is unknown.
//
// A transaction is recorded aborted whenever its commit was never asked
// for, even if the abort itself got no answer: only an EndTxn commit can
// commit it, and the coordinator aborts it on its timeout or when the
// replacing client's InitProducerId fences this one.

const (
	// txnCommitShare is the share of transactions asked to commit.
	txnCommitShare = 0.8
	// txnEndTimeout bounds an EndTxn (and the abort after a failed one).
	txnEndTimeout = 10 * time.Second
	// txnRetryPause is the wait before a producer whose client broke
	// starts a new one.
	txnRetryPause = 500 * time.Millisecond
)

// Txn runs the transactional workload until ctx is done, then lets each
// producer end the transaction under way (bounded by cfg.DeliveryTimeout
// and two EndTxn timeouts) and the members leave. The topic must exist
// (CreateTopic).
func Txn(ctx context.Context, cfg Config, rec *history.Recorder) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	var cs []*Consumer
	for i := range cfg.Consumers {
		c, err := NewConsumer(cfg, fmt.Sprintf("txn-consumer-%d", i+1), rec, false,
			kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		if err != nil {
			for _, c := range cs {
				c.Client.Close()
			}
			return fmt.Errorf("txn workload: %w", err)
		}
		cs = append(cs, c)
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() { c.Run(ctx) })
	}
	for i := range cfg.Producers {
		p := newTxnProducer(cfg, i+1, rec)
		wg.Go(func() { p.run(ctx) })
	}
	wg.Wait()
	for _, c := range cs {
		wg.Go(func() { c.Leave(leaveTimeout) })
	}
	wg.Wait()
	return nil
}

// txnProducer is one transactional producer. Its client is replaced when
// it breaks (a fatal producer id error, an abort without an answer).
type txnProducer struct {
	process string
	txnID   string
	cfg     Config
	rec     *history.Recorder
	rng     *rand.Rand
	// interval is the time one value takes at the producer's share of
	// cfg.Rate.
	interval time.Duration
	cl       *kgo.Client
	n, k     int64 // values and transactions so far

	mu sync.Mutex
	// Invariant: open holds exactly the current transaction's sends that
	// are recorded as Send and have no outcome yet; whoever removes a send
	// records its outcome, so each send ends once.
	open map[string]txnSend
	// failed counts the current transaction's sends that ended without
	// an Ack.
	failed int
}

type txnSend struct {
	txn       string
	partition int32
	at        time.Time
}

func newTxnProducer(cfg Config, i int, rec *history.Recorder) *txnProducer {
	return &txnProducer{
		process:  fmt.Sprintf("txn-%d", i),
		txnID:    fmt.Sprintf("verify-%s-txn-%d", cfg.Topic, i),
		cfg:      cfg,
		rec:      rec,
		rng:      rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i))),
		interval: time.Duration(int64(time.Second) * int64(cfg.Producers) / int64(cfg.Rate)),
		open:     make(map[string]txnSend),
	}
}

// run transacts until ctx is done, pacing values at interval.
func (p *txnProducer) run(ctx context.Context) {
	defer p.closeClient()
	for ctx.Err() == nil {
		start := p.cfg.Clock.Now()
		n := p.transact(ctx)
		wait := time.Duration(n)*p.interval - p.cfg.Clock.Now().Sub(start)
		if n == 0 {
			wait = txnRetryPause
		}
		if wait > 0 && txnSleep(ctx, p.cfg, wait) != nil {
			return
		}
	}
}

func (p *txnProducer) client() (*kgo.Client, error) {
	if p.cl != nil {
		return p.cl, nil
	}
	cl, err := NewClient(p.cfg,
		kgo.TransactionalID(p.txnID),
		kgo.TransactionTimeout(p.cfg.DeliveryTimeout+2*txnEndTimeout),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(p.cfg.DeliveryTimeout),
		kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return nil, fmt.Errorf("txn producer %s: %w", p.process, err)
	}
	p.cl = cl
	return cl, nil
}

// closeClient drops a client whose state is not known to be clean; the
// next one's InitProducerId fences it and aborts what it left open.
func (p *txnProducer) closeClient() {
	if p.cl != nil {
		p.cl.Close()
		p.cl = nil
	}
}

// transact runs one transaction to its recorded end and returns the
// number of values it sent (0 when it could not begin).
func (p *txnProducer) transact(ctx context.Context) int {
	cl, err := p.client()
	if err == nil {
		err = cl.BeginTransaction()
	}
	if err != nil {
		p.cfg.Log.Warn("txn workload: cannot begin a transaction", "process", p.process, "err", err)
		p.closeClient()
		return 0
	}
	p.k++
	txn := fmt.Sprintf("%s-t%d", p.process, p.k)
	begin := p.rec.Record(history.Op{Kind: history.TxnBegin, Process: p.process, Topic: p.cfg.Topic, Offset: -1, Txn: txn})
	parts := p.pickPartitions()
	p.mu.Lock()
	p.failed = 0
	p.mu.Unlock()
	for _, part := range parts {
		p.send(cl, txn, part)
	}
	commit := p.rng.Float64() < txnCommitShare
	// The transaction ends even when the run does: its records and EndTxn
	// do not see ctx, the delivery and EndTxn timeouts bound them.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.DeliveryTimeout)
	flushErr := cl.Flush(fctx)
	cancel()
	unacked := p.settleOpen(flushErr)
	end := txnEnd{txn: txn, begin: begin, flushed: flushErr == nil}
	switch {
	case unacked > 0:
		end.why = fmt.Sprintf("%d of its %d sends not acknowledged", unacked, len(parts))
		p.abort(cl, end)
	case commit:
		p.commit(cl, end)
	default:
		end.why = "chosen to abort"
		p.abort(cl, end)
	}
	return len(parts)
}

// pickPartitions draws 2-3 distinct partitions (fewer if the topic has
// fewer) and 2-6 values over them, each partition getting at least one:
// the partition of each value in send order.
func (p *txnProducer) pickPartitions() []int32 {
	np := min(2+p.rng.IntN(2), int(p.cfg.Partitions))
	perm := p.rng.Perm(int(p.cfg.Partitions))[:np]
	nv := max(np, 2+p.rng.IntN(5))
	out := make([]int32, nv)
	for i := range out {
		j := i
		if i >= np {
			j = p.rng.IntN(np)
		}
		out[i] = int32(perm[j])
	}
	return out
}

// send records a Send of the next value to part in txn and produces it;
// the promise records its outcome.
func (p *txnProducer) send(cl *kgo.Client, txn string, part int32) {
	v := fmt.Sprintf("%s-%d", p.process, p.n)
	p.n++
	p.mu.Lock()
	p.open[v] = txnSend{txn: txn, partition: part, at: p.cfg.Clock.Now()}
	p.mu.Unlock()
	p.rec.Record(history.Op{Kind: history.Send, Process: p.process, Topic: p.cfg.Topic,
		Partition: part, Offset: -1, Value: v, Txn: txn})
	r := &kgo.Record{Topic: p.cfg.Topic, Partition: part, Value: []byte(v)}
	cl.Produce(context.Background(), r, func(r *kgo.Record, err error) { p.settle(v, r, err) })
}

// settle records the outcome of the send of v unless settleOpen did.
func (p *txnProducer) settle(v string, r *kgo.Record, err error) {
	p.mu.Lock()
	s, ok := p.open[v]
	delete(p.open, v)
	if ok && err != nil {
		p.failed++
	}
	p.mu.Unlock()
	if !ok {
		return
	}
	op := history.Op{Kind: Classify(err), Process: p.process, Topic: p.cfg.Topic, Partition: s.partition,
		Offset: -1, Value: v, Txn: s.txn, Latency: p.cfg.Clock.Now().Sub(s.at)}
	if err != nil {
		op.Err = err.Error()
	} else {
		op.Offset = r.Offset
	}
	p.rec.Record(op)
}

// settleOpen ends the sends still open after the flush (records Info: the
// transaction ends without knowing) and returns how many of the
// transaction's sends were not acknowledged.
func (p *txnProducer) settleOpen(flushErr error) int {
	p.mu.Lock()
	open := p.open
	p.open = make(map[string]txnSend)
	failed := p.failed
	p.mu.Unlock()
	why := "no answer when the transaction ended"
	if flushErr != nil {
		why = "no answer before the flush gave up: " + flushErr.Error()
	}
	for v, s := range open {
		p.rec.Record(history.Op{Kind: history.Info, Process: p.process, Topic: p.cfg.Topic,
			Partition: s.partition, Offset: -1, Value: v, Txn: s.txn, Err: why})
	}
	return len(open) + failed
}

func txnSleep(ctx context.Context, cfg Config, d time.Duration) error {
	t := cfg.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}
