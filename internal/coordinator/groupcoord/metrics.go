package groupcoord

import (
	"context"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
)

// retiredCounters sums the counters of the shards that stopped (their
// partition moved, or a new leader epoch reloaded it), so the node's
// counters never go back when a shard goes. A scrape racing a shard's stop
// may count it twice or not at all, once.
type retiredCounters struct {
	mu sync.Mutex
	c  group.Counters
}

func (r *retiredCounters) add(c group.Counters) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c.Add(c)
}

func (r *retiredCounters) get() group.Counters {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.c
}

// Metrics sums the metrics of the shards this node runs, each read on its
// own loop; with offsets set it copies every group's committed offsets
// too (for lag). Shards still loading, or not answering before ctx ends,
// are left out, as Kafka's gauges see only loaded shards.
func (c *GroupCoordinator) Metrics(ctx context.Context, offsets bool) group.MetricsSnapshot {
	answers := runtime.CallAll(ctx, c.rt, func(_ time.Time, s *groupShard, reply func(group.MetricsSnapshot)) {
		reply(s.mgr.Metrics(offsets))
	})
	sum := group.MetricsSnapshot{ConsumerGroups: map[string]int{}, Counters: c.retired.get()}
	for _, a := range answers {
		if a.Code != 0 {
			continue
		}
		for i, n := range a.Value.ClassicGroups {
			sum.ClassicGroups[i] += n
		}
		for state, n := range a.Value.ConsumerGroups {
			sum.ConsumerGroups[state] += n
		}
		sum.Offsets += a.Value.Offsets
		sum.Counters.Add(a.Value.Counters)
		sum.Groups = append(sum.Groups, a.Value.Groups...)
	}
	return sum
}
