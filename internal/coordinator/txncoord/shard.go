package txncoord

import (
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
)

// txnShard is the runtime's Shard of one __transaction_state partition:
// the partition's txn.Manager, whose marker jobs it hands to the marker
// channel after every round of the loop.
type txnShard struct {
	mgr       *txn.Manager
	partition int32
	epoch     int32
	markers   *MarkerChannel
	// lastTick is the time of the latest Tick, from which NextTick counts.
	lastTick time.Time
}

var _ runtime.Shard = (*txnShard)(nil)

// Replay applies a record. __transaction_state holds no transactions of
// its own: a control batch there is skipped.
func (s *txnShard) Replay(now time.Time, b runtime.ReplayBatch, _ int64, key, value []byte) error {
	if b.Control {
		return nil
	}
	return s.mgr.Replay(now, key, value)
}

// Loaded ends the load: decided transactions emit their marker jobs again.
func (s *txnShard) Loaded(now time.Time) []any {
	s.mgr.FinishLoad(now)
	s.lastTick = now
	s.handOverMarkers()
	return []any{"transactional_ids", len(s.mgr.TransactionalIDs())}
}

func (s *txnShard) Tick(now time.Time) {
	s.lastTick = now
	s.mgr.Tick(now)
}

// NextTick sleeps until the Manager's next deadline (the runtime calls it
// right after Tick, and counts the time since that Tick itself).
func (s *txnShard) NextTick(tickInterval time.Duration) time.Duration {
	next := s.mgr.NextDeadline()
	if next.IsZero() {
		return time.Minute
	}
	if d := next.Sub(s.lastTick); d > 0 {
		return d
	}
	return tickInterval
}

// TakeWrites hands the Manager's writes to the runtime and its marker jobs
// to the channel: the runtime calls it after every round of the loop.
func (s *txnShard) TakeWrites() []runtime.Write {
	s.handOverMarkers()
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

func (s *txnShard) handOverMarkers() {
	for _, job := range s.mgr.TakeMarkers() {
		s.markers.Add(s.partition, job)
	}
}

func (s *txnShard) Shutdown(code int16) { s.mgr.Shutdown(code) }
