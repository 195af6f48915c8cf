package sharecoord

import (
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/share"
)

// shareShard is the runtime's Shard of one __share_group_state partition.
type shareShard struct {
	mgr *share.Manager
	// lastTick is the time of the latest Tick, from which NextTick counts.
	lastTick time.Time
}

var _ runtime.Shard = (*shareShard)(nil)

// Replay applies a record. __share_group_state holds no transactions: a
// control batch there is skipped.
func (s *shareShard) Replay(_ time.Time, b runtime.ReplayBatch, offset int64, key, value []byte) error {
	if b.Control {
		return nil
	}
	return s.mgr.Replay(offset, key, value)
}

func (s *shareShard) Loaded(now time.Time) []any {
	s.mgr.FinishLoad(now)
	s.lastTick = now
	return []any{"share_partitions", len(s.mgr.Keys())}
}

func (s *shareShard) Tick(now time.Time) {
	s.lastTick = now
	s.mgr.Tick(now)
}

// NextTick sleeps until the Manager's next deadline.
func (s *shareShard) NextTick(tickInterval time.Duration) time.Duration {
	next := s.mgr.NextDeadline()
	if next.IsZero() {
		return time.Minute
	}
	if d := next.Sub(s.lastTick); d > 0 {
		return d
	}
	return tickInterval
}

func (s *shareShard) TakeWrites() []runtime.Write {
	writes := s.mgr.TakeWrites()
	if len(writes) == 0 {
		return nil
	}
	out := make([]runtime.Write, len(writes))
	for i, w := range writes {
		recs := make([]runtime.Record, len(w.Records))
		for j, r := range w.Records {
			recs[j] = runtime.Record{Key: r.Key, Value: r.Value}
		}
		out[i] = runtime.Write{Records: recs, Done: w.Done}
	}
	return out
}

func (s *shareShard) Shutdown(int16) { s.mgr.Shutdown() }
