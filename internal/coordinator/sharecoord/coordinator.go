package sharecoord

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/share"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
)

// ShareCoordinator is the broker's share coordinator.
type ShareCoordinator struct {
	opts   Options
	rt     *runtime.Runtime[*shareShard]
	closed atomic.Bool
	// stopPrune ends the prune loop; pruned is closed once it returned.
	stopPrune context.CancelFunc
	pruned    chan struct{}

	// topicsMu guards topics, the topic ids of the last image applied,
	// from which ApplyImage learns which topics were deleted.
	topicsMu sync.Mutex
	topics   map[kafka.UUID]bool
}

// New returns a coordinator with no shards; ApplyImage starts them.
func New(opts Options) (*ShareCoordinator, error) {
	opts.withDefaults()
	if opts.Writer == nil {
		return nil, fmt.Errorf("share coordinator: no PartitionWriter")
	}
	c := &ShareCoordinator{opts: opts, pruned: make(chan struct{})}
	c.opts.Writer = observingWriter{PartitionWriter: opts.Writer, c: c}
	cfg := opts.Share
	rt, err := runtime.New(c.opts.runtimeOptions(func(_, _ int32, now time.Time) *shareShard {
		return &shareShard{mgr: share.NewManager(cfg, now)}
	}))
	if err != nil {
		return nil, fmt.Errorf("share coordinator: %w", err)
	}
	c.rt = rt
	ctx, cancel := context.WithCancel(context.Background())
	c.stopPrune = cancel
	go func() {
		defer close(c.pruned)
		if opts.DeleteRecords != nil {
			c.pruneLoop(ctx)
		}
	}()
	return c, nil
}

// ApplyImage starts a shard for each __share_group_state partition this
// node leads (or restarts it on a new leader epoch) and stops the others;
// the state of share partitions of topics the image no longer holds is
// deleted (Kafka's handleTopicsDeletion). The node calls it after each
// metadata change.
func (c *ShareCoordinator) ApplyImage(image *metadata.Image) {
	c.rt.ApplyImage(image)
	if deleted := c.deletedTopics(image); len(deleted) > 0 {
		// Bounded: a shard that cannot take it now loads the tombstones'
		// absence as state, and the next deletion retries nothing, as in
		// Kafka, where a failed clean-up is only logged.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		runtime.CallAll(ctx, c.rt, func(_ time.Time, s *shareShard, reply func(struct{})) {
			s.mgr.CleanupTopics(deleted)
			reply(struct{}{})
		})
	}
}

func (c *ShareCoordinator) deletedTopics(image *metadata.Image) []kafka.UUID {
	now := make(map[kafka.UUID]bool)
	for _, name := range image.TopicNames() {
		if t, ok := image.Topic(name); ok {
			now[t.ID] = true
		}
	}
	c.topicsMu.Lock()
	defer c.topicsMu.Unlock()
	var deleted []kafka.UUID
	for id := range c.topics {
		if !now[id] {
			deleted = append(deleted, id)
		}
	}
	c.topics = now
	return deleted
}

// Close stops every shard; later requests answer COORDINATOR_NOT_AVAILABLE.
func (c *ShareCoordinator) Close() {
	c.closed.Store(true)
	c.stopPrune()
	<-c.pruned
	c.rt.Close()
}

// PartitionFor returns the __share_group_state partition of a share
// partition: Kafka's Utils.abs(key.asCoordinatorKey().hashCode()) %
// partitionCount.
func (c *ShareCoordinator) PartitionFor(k share.Key) int32 {
	return runtime.PartitionFor(k.CoordinatorKey(), c.rt.PartitionCount())
}

// FindCoordinator answers a FindCoordinator key of type 2 (share): the
// broker leading the key's __share_group_state partition, as reached on
// listener. A key that is not "group:topicId:partition" is
// INVALID_REQUEST; the topic is created on first use, and until it has a
// leader the answer is COORDINATOR_NOT_AVAILABLE. The caller checks
// Kafka's rules first: FindCoordinator v6+ and CLUSTER_ACTION.
func (c *ShareCoordinator) FindCoordinator(ctx context.Context, key, listener string) (runtime.Node, int16) {
	k, err := share.ParseCoordinatorKey(key)
	if err != nil {
		return runtime.Node{NodeID: -1, Port: -1}, kerr.InvalidRequest.Code
	}
	// Hashed in Kafka's canonical form, which a parsed key prints.
	return c.rt.Locate(ctx, k.CoordinatorKey(), listener)
}

// each runs op for every key on its shard, concurrently, and returns the
// answers in order; a shard that could not serve gives failed(code) with
// Kafka's code for it (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, or
// COORDINATOR_NOT_AVAILABLE for a timeout).
func each[T any](ctx context.Context, c *ShareCoordinator, keys []share.Key, op func(now time.Time, m *share.Manager, i int, reply func(T)), failed func(code int16) T) []T {
	out := make([]T, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Go(func() {
			v, code := runtime.Call(ctx, c.rt, c.PartitionFor(k), func(now time.Time, s *shareShard, reply func(T)) {
				op(now, s.mgr, i, reply)
			})
			if code != 0 {
				v = failed(share.WriteErrorCode(kerr.ErrorForCode(code)))
			}
			out[i] = v
		})
	}
	wg.Wait()
	return out
}

// unavailable is Kafka's message while the coordinator is not active.
const unavailable = "Share coordinator is not available."

func errResult(code int16) share.Result {
	msg := kerr.ErrorForCode(code).(*kerr.Error).Description
	return share.Result{ErrorCode: code, ErrorMessage: &msg}
}
