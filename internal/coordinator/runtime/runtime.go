package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/purgatory"
)

// Runtime runs a shard for every partition of its topic this node leads,
// and routes operations to them.
type Runtime[S Shard] struct {
	opts Options[S]

	mu struct {
		sync.Mutex
		shards map[int32]*shard[S]
		closed bool
	}
	// creating serializes creations of the topic.
	creating sync.Mutex
}

// New returns a runtime with no shards; ApplyImage starts them.
func New[S Shard](opts Options[S]) (*Runtime[S], error) {
	opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("%s runtime: %w", opts.Name, err)
	}
	r := &Runtime[S]{opts: opts}
	r.mu.shards = make(map[int32]*shard[S])
	return r, nil
}

// ApplyImage starts a shard for each partition of the topic this node
// leads (or restarts it on a new leader epoch) and stops the others. The
// node calls it after each metadata change.
func (r *Runtime[S]) ApplyImage(image *metadata.Image) {
	led := make(map[int32]int32)
	if t, ok := image.Topic(r.opts.Topic); ok {
		for p, st := range t.Partitions {
			if st.Leader == r.opts.NodeID {
				led[p] = st.LeaderEpoch
			}
		}
	}
	r.mu.Lock()
	if r.mu.closed {
		r.mu.Unlock()
		return
	}
	var stopping []*shard[S]
	for p, s := range r.mu.shards {
		if epoch, ok := led[p]; !ok || epoch != s.epoch {
			stopping = append(stopping, s)
			delete(r.mu.shards, p)
		}
	}
	r.mu.Unlock()
	// Old shards stop before new ones start: a shard reloading its
	// partition on a new epoch must see every record the old one wrote.
	for _, s := range stopping {
		s.stop()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.closed {
		return
	}
	for p, epoch := range led {
		if _, ok := r.mu.shards[p]; !ok {
			r.mu.shards[p] = newShard(&r.opts, p, epoch)
		}
	}
}

// Close stops every shard.
func (r *Runtime[S]) Close() {
	r.mu.Lock()
	r.mu.closed = true
	shards := r.mu.shards
	r.mu.shards = nil
	r.mu.Unlock()
	for _, s := range shards {
		s.stop()
	}
}

// LeaderEpoch returns the leader epoch of the partition's running shard
// (fixed for the shard's life), or false when none runs.
func (r *Runtime[S]) LeaderEpoch(partition int32) (int32, bool) {
	s, ok := r.shard(partition)
	if !ok {
		return 0, false
	}
	return s.epoch, true
}

// PartitionCount is the existing topic's partition count, else the
// configured one: the count keys are mapped over.
func (r *Runtime[S]) PartitionCount() int32 {
	if t, ok := r.opts.Image().Topic(r.opts.Topic); ok && len(t.Partitions) > 0 {
		return int32(len(t.Partitions))
	}
	return r.opts.NumPartitions
}

func (r *Runtime[S]) shard(partition int32) (*shard[S], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.mu.shards[partition]
	return s, ok
}

// Call runs op on the loop of the partition's shard and waits for the value
// op delivers through its reply function (at once, or later from the loop,
// say once a write is durable). The code is non-zero when the shard could
// not serve (NOT_COORDINATOR when this node does not run it,
// COORDINATOR_LOAD_IN_PROGRESS while it loads) or ctx ended
// (REQUEST_TIMED_OUT); the value is then the zero value.
func Call[S Shard, T any](ctx context.Context, r *Runtime[S], partition int32, op func(now time.Time, shard S, reply func(T))) (T, int16) {
	s, ok := r.shard(partition)
	if !ok {
		var zero T
		return zero, kerr.NotCoordinator.Code
	}
	return call(ctx, s, op, false)
}

// CallAfterLoad is Call for what must reach the partition's state machine
// whatever its load has seen: while the shard loads, op waits for the end of
// the load instead of answering COORDINATOR_LOAD_IN_PROGRESS. The result of
// a transaction whose marker is already in the log is such an operation: a
// load that read the marker has applied it, one that ended before must get
// it from op. NOT_COORDINATOR means no shard runs the partition, so the one
// that starts later loads the marker.
func CallAfterLoad[S Shard, T any](ctx context.Context, r *Runtime[S], partition int32, op func(now time.Time, shard S, reply func(T))) (T, int16) {
	s, ok := r.shard(partition)
	if !ok {
		var zero T
		return zero, kerr.NotCoordinator.Code
	}
	return call(ctx, s, op, true)
}

// Answer is one shard's answer to CallAll.
type Answer[T any] struct {
	Partition int32
	Value     T
	// Code is Call's code for this shard.
	Code int16
}

// CallAll runs op on every shard this node runs, concurrently (one
// goroutine per shard, all done when it returns), and returns their
// answers in no particular order.
func CallAll[S Shard, T any](ctx context.Context, r *Runtime[S], op func(now time.Time, shard S, reply func(T))) []Answer[T] {
	r.mu.Lock()
	shards := make([]*shard[S], 0, len(r.mu.shards))
	for _, s := range r.mu.shards {
		shards = append(shards, s)
	}
	r.mu.Unlock()
	answers := make([]Answer[T], len(shards))
	var wg sync.WaitGroup
	for i, s := range shards {
		wg.Go(func() {
			v, code := call(ctx, s, op, false)
			answers[i] = Answer[T]{Partition: s.partition, Value: v, Code: code}
		})
	}
	wg.Wait()
	return answers
}

func call[S Shard, T any](ctx context.Context, s *shard[S], op func(now time.Time, shard S, reply func(T)), afterLoad bool) (T, int16) {
	var zero T
	ch := make(chan T, 1)
	code := s.submit(func(now time.Time, sh S) {
		op(now, sh, func(v T) { ch <- v })
	}, afterLoad)
	if code != 0 {
		return zero, code
	}
	// Waiting for the shard's answer is the request's remote time, as
	// Kafka's coordinator completes a future the request waits on.
	purgatory.Park(ctx)
	defer purgatory.Unpark(ctx)
	select {
	case v := <-ch:
		return v, 0
	case <-s.done:
		return zero, kerr.NotCoordinator.Code
	case <-ctx.Done():
		return zero, kerr.RequestTimedOut.Code
	}
}
