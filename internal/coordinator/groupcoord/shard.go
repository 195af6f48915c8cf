package groupcoord

import (
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/kafka"
)

// groupShard is the runtime's Shard of one __consumer_offsets partition:
// the partition's group.Manager.
type groupShard struct {
	mgr *group.Manager
	// retentionCheck is offsets.retention.check.interval.ms.
	retentionCheck time.Duration
	// retired keeps the counters once the shard stops (nil in tests).
	retired *retiredCounters
}

var _ runtime.Shard = (*groupShard)(nil)

func newGroupShard(cfg group.Config, now time.Time) *groupShard {
	return &groupShard{mgr: group.NewManager(cfg, now), retentionCheck: cfg.OffsetsRetentionCheckInterval}
}

// Replay applies a record, with the producer of its batch when the batch is
// a transaction's, and a transaction marker as the transaction's result.
func (s *groupShard) Replay(now time.Time, b runtime.ReplayBatch, offset int64, key, value []byte) error {
	switch {
	case b.Control:
		s.mgr.CompleteTransaction(now, b.ProducerID, b.Commit)
		return nil
	case b.Transactional:
		return s.mgr.Replay(now, offset, b.ProducerID, key, value)
	default:
		return s.mgr.Replay(now, offset, kafka.NoProducerID, key, value)
	}
}

func (s *groupShard) Loaded(now time.Time) []any {
	s.mgr.FinishLoad(now)
	return []any{"groups", len(s.mgr.GroupIDs())}
}

func (s *groupShard) Tick(now time.Time) { s.mgr.Tick(now) }

// NextTick wakes the loop every tickInterval while some group has a timer
// running, and otherwise only for the offset expiry check.
func (s *groupShard) NextTick(tickInterval time.Duration) time.Duration {
	if s.mgr.HasTimers() {
		return tickInterval
	}
	if s.retentionCheck > 0 {
		return s.retentionCheck
	}
	return time.Minute
}

// TakeWrites hands the Manager's writes to the runtime; their records share
// one allocation.
func (s *groupShard) TakeWrites() []runtime.Write {
	writes := s.mgr.TakeWrites()
	if len(writes) == 0 {
		return nil
	}
	n := 0
	for _, w := range writes {
		n += len(w.Records)
	}
	recs := make([]runtime.Record, 0, n)
	out := make([]runtime.Write, len(writes))
	for i, w := range writes {
		start := len(recs)
		for _, r := range w.Records {
			recs = append(recs, runtime.Record{Key: r.Key, Value: r.Value})
		}
		out[i] = runtime.Write{Records: recs[start:len(recs):len(recs)], Done: w.Done}
		if p := w.Transaction; p != nil {
			out[i].Transaction = &runtime.Producer{ID: p.ID, Epoch: p.Epoch}
		}
	}
	return out
}

func (s *groupShard) Shutdown(code int16) {
	s.mgr.Shutdown(code)
	if s.retired != nil {
		s.retired.add(s.mgr.Counters())
	}
}
