package txncoord

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/replication"
)

// MarkerChannel writes the markers of decided transactions (Kafka's
// TransactionMarkerChannelManager): it resolves each partition's leader
// in the published image, batches the markers per leader into one
// WriteTxnMarkers at a time, sends it through the local MarkerWriter or to
// the leader's inter-broker listener, retries what failed, and once every
// partition of a job has acknowledged its marker reports it to the shard
// (MarkersWritten), which writes the completion.
//
// A job is dropped when its shard no longer runs at the job's coordinator
// epoch (the partition's next coordinator loads the transaction and sends
// its markers again) or a partition answers that the producer or the
// coordinator was fenced. A partition of a topic the image no longer has
// counts as acknowledged, as in Kafka.
//
// It runs one goroutine that dispatches, and one per WriteTxnMarkers in
// flight (at most one per destination broker).
type MarkerChannel struct {
	nodeID  int32
	opts    MarkerOptions
	image   func() *metadata.Image
	clock   clock.Clock
	log     *slog.Logger
	owns    func(partition, coordinatorEpoch int32) bool
	written func(ctx context.Context, partition int32, job txn.MarkerJob)

	// mu guards the queues below; it is taken under no other lock and
	// held across owns (the runtime's shard map lock, a leaf).
	mu struct {
		sync.Mutex
		// txns are the jobs not wholly acknowledged, by transactional id;
		// a queued item whose job is no longer here is dropped.
		txns map[string]*pendingTxn
		// ready are partitions to resolve and send once due.
		ready []sendItem
		// dests are the markers resolved to each leader.
		dests            map[int32]*destination
		started, stopped bool
	}
	notify chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// pendingTxn is one job whose markers are being written.
type pendingTxn struct {
	partition int32 // of __transaction_state
	job       txn.MarkerJob
	remaining map[kafka.TopicPartition]struct{}
	// failures counts the rounds since the last acknowledgement, for the
	// retry backoff.
	failures int
}

type sendItem struct {
	txn   *pendingTxn
	parts []kafka.TopicPartition
	due   time.Time
}

// destination is a leader's markers waiting for its next request.
type destination struct {
	waiting  []markerEntry
	inflight bool
}

// markerEntry is one job's partitions in one request.
type markerEntry struct {
	txn   *pendingTxn
	parts []kafka.TopicPartition
}

const maxMarkerBackoff = time.Second

func newMarkerChannel(nodeID int32, opts MarkerOptions, image func() *metadata.Image, clk clock.Clock, log *slog.Logger,
	owns func(int32, int32) bool, written func(context.Context, int32, txn.MarkerJob)) *MarkerChannel {
	if opts.RetryBackoff <= 0 {
		opts.RetryBackoff = 100 * time.Millisecond
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 30 * time.Second
	}
	c := &MarkerChannel{nodeID: nodeID, opts: opts, image: image, clock: clk, log: log, owns: owns, written: written,
		notify: make(chan struct{}, 1)}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.mu.txns = make(map[string]*pendingTxn)
	c.mu.dests = make(map[int32]*destination)
	return c
}

// Start starts the dispatching goroutine. It is a no-op once stopped.
func (c *MarkerChannel) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.started || c.mu.stopped {
		return
	}
	c.mu.started = true
	c.wg.Go(c.run)
}

// Stop cancels the requests in flight and waits for every goroutine.
// Jobs not written are dropped.
func (c *MarkerChannel) Stop() {
	c.mu.Lock()
	c.mu.stopped = true
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
}

// Add queues the markers of job, emitted by the shard of partition. A job
// of the same transactional id still queued is replaced.
func (c *MarkerChannel) Add(partition int32, job txn.MarkerJob) {
	c.mu.Lock()
	if c.mu.stopped {
		c.mu.Unlock()
		return
	}
	p := &pendingTxn{partition: partition, job: job, remaining: make(map[kafka.TopicPartition]struct{}, len(job.Partitions))}
	for _, tp := range job.Partitions {
		p.remaining[tp] = struct{}{}
	}
	if old, ok := c.mu.txns[job.TransactionalID]; ok {
		c.log.Info("replacing the pending markers of a transaction", "transactional_id", job.TransactionalID,
			"old_producer_epoch", old.job.ProducerEpoch, "producer_epoch", job.ProducerEpoch)
	}
	c.mu.txns[job.TransactionalID] = p
	c.mu.ready = append(c.mu.ready, sendItem{txn: p, parts: job.Partitions, due: c.clock.Now()})
	c.mu.Unlock()
	c.wake()
}

// Pending is the number of jobs not wholly acknowledged.
func (c *MarkerChannel) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.txns)
}

func (c *MarkerChannel) wake() {
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

func (c *MarkerChannel) run() {
	timer := c.clock.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		wait := c.dispatch()
		timer.Reset(wait)
		select {
		case <-c.ctx.Done():
			return
		case <-c.notify:
		case <-timer.C():
		}
	}
}

// dispatch resolves the due partitions to their leaders and sends a
// request to every leader with markers waiting and none in flight. It
// returns how long until the next item is due.
func (c *MarkerChannel) dispatch() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	image := c.image()
	next := time.Hour
	kept := c.mu.ready[:0]
	var later []sendItem
	for _, it := range c.mu.ready {
		if it.due.After(now) {
			next = min(next, it.due.Sub(now))
			kept = append(kept, it)
			continue
		}
		if c.mu.txns[it.txn.job.TransactionalID] != it.txn {
			continue // replaced or dropped
		}
		if !c.owns(it.txn.partition, it.txn.job.CoordinatorEpoch) {
			c.log.Info("no longer the transaction's coordinator; not sending its markers",
				"transactional_id", it.txn.job.TransactionalID, "coordinator_epoch", it.txn.job.CoordinatorEpoch)
			delete(c.mu.txns, it.txn.job.TransactionalID)
			continue
		}
		if retry := c.resolveLocked(image, it); len(retry) > 0 {
			wait := c.backoff(it.txn)
			next = min(next, wait)
			later = append(later, sendItem{txn: it.txn, parts: retry, due: now.Add(wait)})
		}
	}
	c.mu.ready = append(kept, later...)
	for id, d := range c.mu.dests {
		if d.inflight || len(d.waiting) == 0 {
			continue
		}
		entries := d.waiting
		d.waiting, d.inflight = nil, true
		c.wg.Go(func() { c.send(id, entries) })
	}
	return next
}

// resolveLocked puts the item's partitions in their leaders' queues. A
// partition the image does not have is acknowledged (its topic was
// deleted); one without a reachable leader is returned, to retry.
func (c *MarkerChannel) resolveLocked(image *metadata.Image, it sendItem) (retry []kafka.TopicPartition) {
	byLeader := make(map[int32][]kafka.TopicPartition)
	for _, tp := range it.parts {
		if _, ok := it.txn.remaining[tp]; !ok {
			continue
		}
		st, ok := image.Partition(tp)
		switch {
		case !ok:
			c.log.Info("partition of a transaction no longer exists; its marker is skipped",
				"transactional_id", it.txn.job.TransactionalID, "partition", tp)
			delete(it.txn.remaining, tp)
		case st.Leader < 0 || !c.reachable(image, st.Leader):
			retry = append(retry, tp)
		default:
			byLeader[st.Leader] = append(byLeader[st.Leader], tp)
		}
	}
	for leader, parts := range byLeader {
		c.enqueueLocked(leader, it.txn, parts)
	}
	if len(it.txn.remaining) == 0 {
		c.completeLocked(it.txn)
	}
	return retry
}

// enqueueLocked adds parts of t to the leader's next request, merged with
// t's partitions already waiting there.
func (c *MarkerChannel) enqueueLocked(leader int32, t *pendingTxn, parts []kafka.TopicPartition) {
	d, ok := c.mu.dests[leader]
	if !ok {
		d = &destination{}
		c.mu.dests[leader] = d
	}
	for i := range d.waiting {
		if d.waiting[i].txn == t {
			for _, tp := range parts {
				if !containsTP(d.waiting[i].parts, tp) {
					d.waiting[i].parts = append(d.waiting[i].parts, tp)
				}
			}
			return
		}
	}
	d.waiting = append(d.waiting, markerEntry{txn: t, parts: parts})
}

func containsTP(parts []kafka.TopicPartition, tp kafka.TopicPartition) bool {
	for _, p := range parts {
		if p == tp {
			return true
		}
	}
	return false
}

// reachable reports whether a leader can be sent markers: this broker, or
// a registered broker with the inter-broker listener while a peer pool
// exists.
func (c *MarkerChannel) reachable(image *metadata.Image, leader int32) bool {
	if leader == c.nodeID {
		return true
	}
	if c.opts.Peers == nil {
		return false
	}
	_, ok := replication.BrokerAddress(image, leader, c.opts.Listener)
	return ok
}

// completeLocked ends a job whose partitions all acknowledged: the shard
// is told on a goroutine of its own, so that no lock is held across it.
func (c *MarkerChannel) completeLocked(t *pendingTxn) {
	if c.mu.txns[t.job.TransactionalID] == t {
		delete(c.mu.txns, t.job.TransactionalID)
	}
	c.wg.Go(func() { c.written(c.ctx, t.partition, t.job) })
}

// backoff is the wait before t's next retry: RetryBackoff doubling with
// each round without an acknowledgement, up to a second.
func (c *MarkerChannel) backoff(t *pendingTxn) time.Duration {
	d := c.opts.RetryBackoff
	for i := 0; i < t.failures && d < maxMarkerBackoff; i++ {
		d *= 2
	}
	t.failures++
	return min(d, max(maxMarkerBackoff, c.opts.RetryBackoff))
}
