package share

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
)

// Manager holds the share-partition states of one __share_group_state
// partition. It is not safe for concurrent use: one event loop owns it,
// and runs the Done of every Write it takes on that loop.
type Manager struct {
	cfg    Config
	states map[Key]*partitionState
	// inflight tracks the keys with writes not done yet.
	// Invariant: a key is here exactly while writes of it are pending.
	inflight      map[Key]*inflight
	writes        []Write
	snapshots     snapshotOffsets
	lastColdCheck time.Time
	stopped       bool
}

// inflight is a key's pending writes and its state as of the last one
// that is durable.
type inflight struct {
	pending int
	durable *partitionState // nil: no state
	// failed marks a write that failed: once none is pending the live
	// state goes back to durable, and until then the key refuses
	// operations.
	failed bool
}

// NewManager returns an empty Manager.
func NewManager(cfg Config, now time.Time) *Manager {
	return &Manager{cfg: cfg, states: make(map[Key]*partitionState), inflight: make(map[Key]*inflight),
		snapshots: newSnapshotOffsets(), lastColdCheck: now}
}

// Replay applies one record read back from the partition at offset (the
// load). A record of a type this coordinator does not know is skipped, as
// Kafka skips it; one that does not decode is an error (the runtime logs
// and skips it).
func (m *Manager) Replay(offset int64, key, value []byte) error {
	r, ok, err := decodeRecord(key, value)
	if err != nil || !ok {
		return err
	}
	m.SnapshotAppended(key, value, offset)
	m.set(r.key, apply(m.states[r.key], r, m.cfg.SnapshotUpdateRecordsPerSnapshot))
	return nil
}

// FinishLoad ends the replay: the cold-partition timer starts from now.
func (m *Manager) FinishLoad(now time.Time) { m.lastColdCheck = now }

func (m *Manager) set(k Key, st *partitionState) {
	if st == nil {
		delete(m.states, k)
		return
	}
	m.states[k] = st
}

// Keys returns the share partitions held, sorted.
func (m *Manager) Keys() []Key {
	return slices.SortedFunc(maps.Keys(m.states), func(a, b Key) int {
		return cmp.Or(strings.Compare(a.GroupID, b.GroupID), slices.Compare(a.TopicID[:], b.TopicID[:]), cmp.Compare(a.Partition, b.Partition))
	})
}

// State returns a share partition's state.
func (m *Manager) State(k Key) (Offset, bool) {
	st, ok := m.states[k]
	if !ok {
		return Offset{}, false
	}
	return st.offset, true
}

// TakeWrites returns the writes emitted since the last call, in order.
func (m *Manager) TakeWrites() []Write {
	w := m.writes
	m.writes = nil
	return w
}

// Shutdown stops the Manager: nothing more is emitted.
func (m *Manager) Shutdown() { m.stopped = true }

// emit applies r to the live state at once, as Kafka replays a record when
// its operation runs, and appends it; done runs once it is durable or
// failed.
func (m *Manager) emit(r record, done func(err error)) {
	fl, ok := m.inflight[r.key]
	if !ok {
		fl = &inflight{durable: m.states[r.key]}
		m.inflight[r.key] = fl
	}
	fl.pending++
	m.set(r.key, apply(m.states[r.key], r, m.cfg.SnapshotUpdateRecordsPerSnapshot))
	m.writes = append(m.writes, Write{Records: []Record{r.encode()}, Done: func(err error) {
		if err == nil {
			fl.durable = apply(fl.durable, r, m.cfg.SnapshotUpdateRecordsPerSnapshot)
		} else {
			fl.failed = true
		}
		if fl.pending--; fl.pending == 0 {
			delete(m.inflight, r.key)
			if fl.failed {
				m.set(r.key, fl.durable)
			}
		}
		if done != nil {
			done(err)
		}
	}})
}

// restoring reports whether k waits for its writes in flight to restore
// its state after one failed.
func (m *Manager) restoring(k Key) bool {
	fl, ok := m.inflight[k]
	return ok && fl.failed
}

// Tick snapshots the cold partitions when ColdPartitionSnapshotInterval
// has passed since the last check.
func (m *Manager) Tick(now time.Time) {
	if m.stopped || m.cfg.ColdPartitionSnapshotInterval <= 0 || now.Sub(m.lastColdCheck) < m.cfg.ColdPartitionSnapshotInterval {
		return
	}
	m.lastColdCheck = now
	m.snapshotColdPartitions(now)
}

// NextDeadline returns when Tick next has something to do (zero: never).
func (m *Manager) NextDeadline() time.Time {
	if m.cfg.ColdPartitionSnapshotInterval <= 0 {
		return time.Time{}
	}
	return m.lastColdCheck.Add(m.cfg.ColdPartitionSnapshotInterval)
}

// snapshotColdPartitions is Kafka's snapshotColdPartitions: unless every
// state was already snapshotted this way (its write timestamp moved off
// its create timestamp), each state whose write timestamp is at least the
// interval old is written again as a snapshot of the next snapshot epoch,
// stamped now, so that pruning can pass its older records.
func (m *Manager) snapshotColdPartitions(now time.Time) {
	cold := 0
	for _, st := range m.states {
		if st.offset.CreateTimestamp != st.offset.WriteTimestamp {
			cold++
		}
	}
	if cold == len(m.states) {
		return
	}
	nowMs := now.UnixMilli()
	for _, k := range m.Keys() {
		o := m.states[k].offset
		if m.restoring(k) || nowMs-o.WriteTimestamp < m.cfg.ColdPartitionSnapshotInterval.Milliseconds() {
			continue
		}
		m.emit(record{typ: RecordTypeSnapshot, key: k, snapshot: &SnapshotValue{
			SnapshotEpoch: o.SnapshotEpoch + 1, StateEpoch: o.StateEpoch, LeaderEpoch: o.LeaderEpoch,
			StartOffset: o.StartOffset, DeliveryCompleteCount: o.DeliveryCompleteCount,
			CreateTimestamp: o.CreateTimestamp, WriteTimestamp: nowMs, StateBatches: o.StateBatches,
		}}, nil)
	}
}
