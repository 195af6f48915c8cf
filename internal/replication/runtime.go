package replication

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

// ReplicationOptions are the broker's replication settings (Kafka's names).
type ReplicationOptions struct {
	// Transport reaches leader brokers; nil runs no follower fetchers.
	Transport Transport
	// AlterPartition sends ISR changes to the controller; nil makes no
	// ISR changes (the ISR stays as the controller set it).
	AlterPartition AlterPartitionSender
	// BrokerEpoch is this broker's registration epoch, sent in fetches.
	BrokerEpoch func() int64
	// NumReplicaFetchers is num.replica.fetchers: fetcher goroutines per
	// source broker (1).
	NumReplicaFetchers int
	// ReplicaLagTimeMax is replica.lag.time.max.ms (30 s).
	ReplicaLagTimeMax time.Duration
	// FetchWaitMax is replica.fetch.wait.max.ms (500 ms), FetchMinBytes
	// replica.fetch.min.bytes (1), FetchMaxBytes replica.fetch.max.bytes
	// (1 MiB per partition), FetchResponseMaxBytes
	// replica.fetch.response.max.bytes (10 MiB), FetchBackoff
	// replica.fetch.backoff.ms (1 s).
	FetchWaitMax          time.Duration
	FetchMinBytes         int32
	FetchMaxBytes         int32
	FetchResponseMaxBytes int32
	FetchBackoff          time.Duration
	// LeaderQuota and FollowerQuota are the replication throttles
	// (leader./follower.replication.throttled.rate and the topics'
	// throttled replica lists); nil throttles nothing.
	LeaderQuota   ReplicaQuota
	FollowerQuota ReplicaQuota
}

func (o ReplicationOptions) withDefaults() ReplicationOptions {
	if o.NumReplicaFetchers <= 0 {
		o.NumReplicaFetchers = 1
	}
	if o.ReplicaLagTimeMax <= 0 {
		o.ReplicaLagTimeMax = 30 * time.Second
	}
	if o.FetchWaitMax <= 0 {
		o.FetchWaitMax = 500 * time.Millisecond
	}
	if o.FetchMinBytes <= 0 {
		o.FetchMinBytes = 1
	}
	if o.FetchMaxBytes <= 0 {
		o.FetchMaxBytes = 1 << 20
	}
	if o.FetchResponseMaxBytes <= 0 {
		o.FetchResponseMaxBytes = 10 << 20
	}
	if o.FetchBackoff <= 0 {
		o.FetchBackoff = time.Second
	}
	if o.BrokerEpoch == nil {
		o.BrokerEpoch = func() int64 { return -1 }
	}
	return o
}

// fetcherKey names one fetcher goroutine: a source broker and an index
// below num.replica.fetchers, as Kafka's fetcher threads.
type fetcherKey struct {
	leader int32
	index  int
}

type fetcherHandle struct {
	cancel context.CancelFunc
	wake   chan struct{}
}

// replicaRuntime owns the goroutines of replication: one per fetcher key,
// the ISR expiration loop and the AlterPartition sender. Its ctx ends
// them all; stop waits for them.
type replicaRuntime struct {
	rm     *ReplicaManager
	opts   ReplicationOptions
	clk    clock.Clock
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// numFetchers is num.replica.fetchers, changed live by
	// SetNumReplicaFetchers. Invariant: >= 1.
	numFetchers atomic.Int32

	mu struct {
		sync.Mutex
		stopped  bool
		fetchers map[fetcherKey]*fetcherHandle
		// isrQueue holds ISR changes waiting for the sender.
		isrQueue []isrChangeItem
	}
	isrWake chan struct{}
}

type isrChangeItem struct {
	p      *Partition
	change ISRChange
	// expand: the change adds to the ISR (IsrExpands), else it shrinks it.
	expand bool
}

func newReplicaRuntime(rm *ReplicaManager) *replicaRuntime {
	r := &replicaRuntime{rm: rm, opts: rm.opts.Replication.withDefaults(), clk: rm.opts.Clock, isrWake: make(chan struct{}, 1)}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.mu.fetchers = make(map[fetcherKey]*fetcherHandle)
	r.numFetchers.Store(int32(r.opts.NumReplicaFetchers))
	return r
}

// start runs the ISR loops when there is a controller to send changes to.
// The manager calls it once its replicas field is set.
func (r *replicaRuntime) start() {
	if r.opts.AlterPartition != nil {
		r.wg.Add(2)
		go r.runISRSender()
		go r.runISRExpiration()
	}
}

// stop ends every goroutine and waits for them.
func (r *replicaRuntime) stop() {
	r.mu.Lock()
	r.mu.stopped = true
	for k, f := range r.mu.fetchers {
		f.cancel()
		delete(r.mu.fetchers, k)
	}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
}

func (r *replicaRuntime) keyFor(pos fetchPosition) fetcherKey {
	return fetcherKey{leader: pos.leaderID, index: fetcherID(pos.tp, int(r.numFetchers.Load()))}
}

// fetcherID is AbstractFetcherManager.getFetcherId: the fetcher of a
// partition among n per source broker, Utils.abs(31 * topic.hashCode +
// partition) % n, so a partition lands on the fetcher index Kafka's would.
func fetcherID(tp kafka.TopicPartition, n int) int {
	h := int32(0)
	for _, c := range utf16.Encode([]rune(tp.Topic)) {
		h = 31*h + int32(c)
	}
	v := 31*h + tp.Partition
	if v == math.MinInt32 {
		v = 0 // Utils.abs
	} else if v < 0 {
		v = -v
	}
	return int(v) % n
}

// SetNumReplicaFetchers resizes the fetcher pool (num.replica.fetchers
// changed live), as Kafka's resizeThreadPool: partitions move to the
// fetcher of their new index; a follower's fetch position is its log end
// offset, so none is lost in the move, and a fetch answer still in flight
// on the old fetcher is skipped where the new one already appended it.
func (rm *ReplicaManager) SetNumReplicaFetchers(n int) {
	r := rm.replicas
	if n < 1 || int32(n) == r.numFetchers.Swap(int32(n)) {
		return
	}
	r.syncFetchers()
}

// NumReplicaFetchers is the fetcher pool's size per source broker.
func (rm *ReplicaManager) NumReplicaFetchers() int { return int(rm.replicas.numFetchers.Load()) }

// FetcherCount is how many fetcher goroutines run.
func (rm *ReplicaManager) FetcherCount() int {
	r := rm.replicas
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.mu.fetchers)
}

// syncFetchers starts a fetcher for every (leader, index) some followed
// partition needs, stops the ones no partition needs any more, and wakes
// the rest (a partition may have joined them).
func (r *replicaRuntime) syncFetchers() {
	if r.opts.Transport == nil {
		return
	}
	want := make(map[fetcherKey]bool)
	for _, p := range r.rm.Partitions() {
		if pos, ok := p.followerPosition(); ok {
			want[r.keyFor(pos)] = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.stopped {
		return
	}
	for k, f := range r.mu.fetchers {
		if !want[k] {
			f.cancel()
			delete(r.mu.fetchers, k)
		}
	}
	for k := range want {
		if f, ok := r.mu.fetchers[k]; ok {
			select {
			case f.wake <- struct{}{}:
			default:
			}
			continue
		}
		ctx, cancel := context.WithCancel(r.ctx)
		f := &fetcherHandle{cancel: cancel, wake: make(chan struct{}, 1)}
		r.mu.fetchers[k] = f
		r.wg.Add(1)
		go r.runFetcher(ctx, k, f.wake)
	}
}

// sendISRChange queues a change for the sender; without a sender the
// change is dropped at once (its in-flight mark lifted).
func (rm *ReplicaManager) sendISRChange(p *Partition, change ISRChange) {
	r := rm.replicas
	if r.opts.AlterPartition == nil {
		p.isrChangeDone(change, change.PartitionEpoch, errNoAlterPartition)
		return
	}
	item := isrChangeItem{p: p, change: change, expand: len(change.NewISR) > p.isrSize()}
	r.mu.Lock()
	r.mu.isrQueue = append(r.mu.isrQueue, item)
	r.mu.Unlock()
	select {
	case r.isrWake <- struct{}{}:
	default:
	}
}

// isrRetryBackoff is the pause after failed ISR changes before their
// partitions may propose again.
const isrRetryBackoff = 100 * time.Millisecond

// runISRSender sends queued ISR changes one at a time. A partition whose
// change failed may propose again only after isrRetryBackoff: it proposes
// from its very next fetch, so without the pause a quorum with no active
// controller would be asked in a tight loop (Kafka's AlterPartition manager
// backs off too).
func (r *replicaRuntime) runISRSender() {
	defer r.wg.Done()
	var failed []isrChangeItem
	var failedErrs []error
	// Failures not of the expected kinds, logged at WARN once a round.
	unexpected, lastTP, lastErr := 0, "", error(nil)
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-r.isrWake:
		}
		for {
			r.mu.Lock()
			if len(r.mu.isrQueue) == 0 {
				r.mu.Unlock()
				break
			}
			item := r.mu.isrQueue[0]
			r.mu.isrQueue = r.mu.isrQueue[1:]
			r.mu.Unlock()
			ctx, cancel := context.WithTimeout(r.ctx, r.opts.ReplicaLagTimeMax)
			epoch, err := r.opts.AlterPartition.AlterPartition(ctx, item.change)
			cancel()
			r.rm.metrics.isrChangeAnswered(item, epoch, err)
			switch {
			case err == nil:
				item.p.isrChangeDone(item.change, epoch, nil)
				continue
			case errors.Is(err, kerr.IneligibleReplica), errors.Is(err, kerr.FencedLeaderEpoch), errors.Is(err, kerr.InvalidUpdateVersion):
				// A follower catching up while still fenced (restarting):
				// expected until the controller unfences it. A stale
				// leader or partition epoch (leadership moved, as a
				// controlled shutdown moves it) waits for newer metadata:
				// Kafka logs both at DEBUG.
				r.rm.logger.Debug("ISR change not made yet", "partition", item.change.TP.String(), "isr", item.change.NewISR, "err", err)
			default:
				r.rm.logger.Debug("ISR change not made", "partition", item.change.TP.String(), "isr", item.change.NewISR, "err", err)
				unexpected, lastTP, lastErr = unexpected+1, item.change.TP.String(), err
			}
			failed, failedErrs = append(failed, item), append(failedErrs, err)
		}
		if len(failed) == 0 {
			continue
		}
		if unexpected > 0 {
			// One line per round, not per partition: a controller that
			// is gone fails every partition's change alike.
			r.rm.logger.Warn("ISR changes not made", "changes", unexpected, "last_partition", lastTP, "last_err", lastErr)
			unexpected = 0
		}
		sleep(r.ctx, r.clk, nil, isrRetryBackoff)
		for i, item := range failed {
			item.p.isrChangeDone(item.change, item.change.PartitionEpoch, failedErrs[i])
		}
		failed, failedErrs = failed[:0], failedErrs[:0]
		// Changes queued during the pause wait for no new wake-up.
		select {
		case r.isrWake <- struct{}{}:
		default:
		}
	}
}

// runISRExpiration checks every half replica.lag.time.max.ms, as Kafka's
// isr-expiration task, for followers to drop from the ISR.
func (r *replicaRuntime) runISRExpiration() {
	defer r.wg.Done()
	t := r.clk.NewTicker(r.opts.ReplicaLagTimeMax / 2)
	defer t.Stop()
	for {
		select {
		case <-r.ctx.Done():
			return
		case <-t.C():
			r.rm.ShrinkLaggingISRs()
		}
	}
}

// ShrinkLaggingISRs proposes, for every partition this broker leads, to
// drop the followers that have not caught up within replica.lag.time.max.ms.
// The ISR expiration loop calls it; tests with a manual clock call it too.
func (rm *ReplicaManager) ShrinkLaggingISRs() {
	lagMs := rm.replicas.opts.ReplicaLagTimeMax.Milliseconds()
	for _, p := range rm.Partitions() {
		if change := p.shrinkIfLagging(lagMs); change != nil {
			rm.sendISRChange(p, *change)
		}
	}
}
