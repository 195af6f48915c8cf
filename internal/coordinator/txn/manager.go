package txn

import (
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Manager holds the transactional ids of one __transaction_state partition.
// It is not safe for concurrent use: one event loop owns it, and runs the
// Done of every Write it takes on that loop.
type Manager struct {
	cfg Config
	// coordinatorEpoch is the partition's leader epoch this Manager was
	// loaded at; markers carry it so that partitions refuse a stale
	// coordinator's.
	coordinatorEpoch int32
	txns             map[string]*txnMetadata
	writes           []Write
	markers          []MarkerJob
	// retries are completions whose write failed, written again once due.
	retries                         []retry
	lastAbortCheck, lastExpireCheck time.Time
	// now is the latest time a caller passed in: the Done of a write runs
	// without one.
	now     time.Time
	stopped bool
}

type retry struct {
	t   *txnMetadata
	due time.Time
}

// NewManager returns an empty Manager for a partition led at
// coordinatorEpoch.
func NewManager(cfg Config, coordinatorEpoch int32, now time.Time) *Manager {
	return &Manager{cfg: cfg, coordinatorEpoch: coordinatorEpoch, txns: make(map[string]*txnMetadata),
		lastAbortCheck: now, lastExpireCheck: now, now: now}
}

// TransactionalIDs returns the ids the partition holds, sorted.
func (m *Manager) TransactionalIDs() []string { return slices.Sorted(maps.Keys(m.txns)) }

// TakeWrites returns the writes emitted since the last call, in order. The
// caller appends each and then runs its Done on the Manager's goroutine.
func (m *Manager) TakeWrites() []Write {
	w := m.writes
	m.writes = nil
	return w
}

// TakeMarkers returns the marker jobs emitted since the last call. For
// each, the caller writes the markers and then calls MarkersWritten.
func (m *Manager) TakeMarkers() []MarkerJob {
	j := m.markers
	m.markers = nil
	return j
}

// Shutdown stops the Manager: the partition moved or the coordinator
// closes. Nothing waits for a reply but the writes' Done (the runtime
// answers those callers itself); marker jobs not taken are dropped, the new
// coordinator resends them.
func (m *Manager) Shutdown(int16) {
	m.stopped = true
	m.markers, m.retries = nil, nil
}

// Tick fires the timers due at now: completions to write again, the abort
// of timed-out transactions every AbortTimedOutInterval and the removal
// of expired ids every RemoveExpiredInterval. It is cheap when nothing is
// due.
func (m *Manager) Tick(now time.Time) {
	if m.stopped {
		return
	}
	m.now = now
	m.retryCompletions(now)
	if m.cfg.AbortTimedOutInterval > 0 && now.Sub(m.lastAbortCheck) >= m.cfg.AbortTimedOutInterval {
		m.lastAbortCheck = now
		m.abortTimedOut(now)
	}
	if m.cfg.RemoveExpiredInterval > 0 && now.Sub(m.lastExpireCheck) >= m.cfg.RemoveExpiredInterval {
		m.lastExpireCheck = now
		m.expireIDs(now)
	}
}

// NextDeadline returns when Tick next has something to do.
func (m *Manager) NextDeadline() time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if next.IsZero() || t.Before(next) {
			next = t
		}
	}
	if m.cfg.AbortTimedOutInterval > 0 {
		consider(m.lastAbortCheck.Add(m.cfg.AbortTimedOutInterval))
	}
	if m.cfg.RemoveExpiredInterval > 0 {
		consider(m.lastExpireCheck.Add(m.cfg.RemoveExpiredInterval))
	}
	for _, r := range m.retries {
		consider(r.due)
	}
	return next
}

// appendTransit writes tr as t's next state (Kafka's appendTransactionToLog)
// and runs done with the outcome's code once it is durable or failed: on
// success the transition is applied, on failure the pending state is
// dropped so that the client's retry can proceed.
func (m *Manager) appendTransit(t *txnMetadata, tr transit, done func(code int16)) {
	m.writes = append(m.writes, Write{Records: []Record{m.record(t.id, tr)}, Done: func(err error) {
		if err != nil {
			t.hasPending = false
			done(WriteErrorCode(err))
			return
		}
		t.complete(tr)
		done(0)
	}})
}

// Describe returns a transaction of a DescribeTransactions answer.
func (m *Manager) Describe(id string) Description {
	if id == "" {
		return Description{ErrorCode: kerr.InvalidRequest.Code}
	}
	t, ok := m.txns[id]
	if !ok || t.state == Dead {
		return Description{ErrorCode: kerr.TransactionalIDNotFound.Code}
	}
	return Description{
		State: t.state, ProducerID: t.producerID, ProducerEpoch: t.producerEpoch,
		TimeoutMs: t.timeoutMs, StartTimestamp: t.startTimestamp, Partitions: sortedPartitions(t.partitions),
	}
}

// List returns the transactions f keeps, by id (ListTransactions), and
// the state names of f Kafka does not know (unknownStateFilters). As in
// Kafka, state names given but all unknown list nothing.
func (m *Manager) List(now time.Time, f ListFilter) (listed []Listing, unknownStates []string) {
	var states []State
	for _, name := range f.States {
		if s, ok := ParseState(name); ok {
			states = append(states, s)
		} else {
			unknownStates = append(unknownStates, name)
		}
	}
	for _, id := range m.TransactionalIDs() {
		t := m.txns[id]
		switch {
		case t.state == Dead,
			len(f.ProducerIDs) > 0 && !slices.Contains(f.ProducerIDs, t.producerID),
			len(f.States) > 0 && !slices.Contains(states, t.state),
			f.DurationMs >= 0 && now.UnixMilli()-t.startTimestamp <= f.DurationMs,
			f.MatchID != nil && !f.MatchID(id):
			continue
		}
		listed = append(listed, Listing{TransactionalID: id, ProducerID: t.producerID, State: t.state})
	}
	return listed, unknownStates
}
