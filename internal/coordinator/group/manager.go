package group

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Record is one __consumer_offsets record; a nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

// Write is records to append together, and what to run (on the same
// goroutine that drives the Manager) once they are durable or have failed.
type Write struct {
	Records []Record
	// Transaction, when set, writes Records as a transactional batch of
	// that producer (TxnOffsetCommit).
	Transaction *Producer
	// Done may be nil.
	Done func(err error)
}

// Producer is a transactional producer: its id and epoch.
type Producer struct {
	ID    int64
	Epoch int16
}

// Manager holds the groups of one __consumer_offsets partition. It is not
// safe for concurrent use: one event loop owns it.
type Manager struct {
	cfg        Config
	groups     map[string]*Group
	writes     []Write
	lastExpiry time.Time
	// txn holds the offsets of transactions not yet completed.
	txn txnOffsets
	// nextOrder is the log order of the next write (OffsetAndMetadata's
	// order): past every replayed offset, then one more per write, which
	// the shard appends in the order emitted.
	nextOrder int64
	// cgPending are the records of the consumer-group operation running,
	// written together by cgFlush; cgNow is its time.
	cgPending []Record
	cgNow     time.Time
	// canDescribe is the DESCRIBE check of the member whose heartbeat
	// runs: regexes resolved meanwhile keep only the topics it may see,
	// as Kafka resolves them with the context of the member that asked.
	canDescribe func(string) bool
	// counters are the live operations' counts (metrics.go).
	counters Counters
	// share holds the share groups (share_*.go), by id. Invariant: an id
	// is never both here and in groups.
	share map[string]*shareGroup
}

// NewManager returns an empty manager.
func NewManager(cfg Config, now time.Time) *Manager {
	return &Manager{cfg: cfg, groups: make(map[string]*Group), lastExpiry: now, txn: newTxnOffsets()}
}

// Group returns a group by id.
func (m *Manager) Group(id string) (*Group, bool) {
	g, ok := m.groups[id]
	return g, ok
}

// GroupIDs returns the ids of the live groups, sorted.
func (m *Manager) GroupIDs() []string {
	return slices.Sorted(maps.Keys(m.groups))
}

// emit queues a write and returns its log order.
func (m *Manager) emit(recs []Record, done func(error)) int64 {
	return m.emitWrite(Write{Records: recs, Done: done})
}

func (m *Manager) emitWrite(w Write) int64 {
	m.writes = append(m.writes, w)
	m.nextOrder++
	return m.nextOrder - 1
}

// AfterWrites runs fn once every write emitted so far is durable (or has
// failed): OffsetFetch with require_stable waits so, as Kafka's does, to see
// commits still in flight.
func (m *Manager) AfterWrites(fn func()) {
	m.emit(nil, func(error) { fn() })
}

// TakeWrites returns the writes produced since the last call, in order.
// The caller appends each and then runs its Done.
func (m *Manager) TakeWrites() []Write {
	w := m.writes
	m.writes = nil
	return w
}

// Tick fires expired timers: join and sync deadlines, session timeouts,
// pending member ids and, every OffsetsRetentionCheckInterval, offset expiry.
func (m *Manager) Tick(now time.Time) {
	// Groups with a due timer fire in id order, so runs are repeatable.
	var due []string
	for id, g := range m.groups {
		if next := g.nextDeadline(); !next.IsZero() && !now.Before(next) {
			due = append(due, id)
		}
	}
	slices.Sort(due)
	for _, id := range due {
		if g, ok := m.groups[id]; ok {
			g.tick(now)
		}
	}
	if next := m.shareNextDeadline(); !next.IsZero() && !now.Before(next) {
		m.tickShare(now)
	}
	if m.cfg.OffsetsRetentionCheckInterval > 0 && now.Sub(m.lastExpiry) >= m.cfg.OffsetsRetentionCheckInterval {
		m.lastExpiry = now
		m.ExpireOffsets(now)
	}
}

// HasTimers reports whether some group has a timer running: a member
// session, a join or sync deadline, a pending member id.
func (m *Manager) HasTimers() bool {
	if !m.shareNextDeadline().IsZero() {
		return true
	}
	for _, g := range m.groups {
		if g.cg != nil && len(g.cg.members) > 0 {
			return true
		}
		if (g.state != Empty && g.state != Dead) || len(g.pending) > 0 || !g.joinDeadline.IsZero() || !g.syncDeadline.IsZero() {
			return true
		}
	}
	return false
}

// NextDeadline returns the earliest timer of any group, or zero if none.
func (m *Manager) NextDeadline() time.Time {
	next := m.shareNextDeadline()
	for _, g := range m.groups {
		if t := g.nextDeadline(); !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next
}

// Shutdown answers every waiting JoinGroup and SyncGroup with code (the
// shard resigned or stops); the Manager must not be used afterwards.
func (m *Manager) Shutdown(code int16) {
	for _, g := range m.groups {
		for _, id := range g.order {
			mem := g.members[id]
			if mem.joinReply != nil {
				r := mem.joinReply
				mem.joinReply = nil
				r(JoinResult{ErrorCode: code, MemberID: mem.id, GenerationID: -1})
			}
			if mem.syncReply != nil {
				r := mem.syncReply
				mem.syncReply = nil
				r(SyncResult{ErrorCode: code})
			}
		}
	}
}

// Describe returns a group's DescribeGroups answer.
func (m *Manager) Describe(id string) Description {
	g, ok := m.groups[id]
	if !ok || g.state == Dead || g.cg != nil {
		// A consumer group is not a classic group (Kafka's answer too).
		return Description{ErrorCode: kerr.GroupIDNotFound.Code, State: Dead}
	}
	d := Description{State: g.state, ProtocolType: g.protocolType}
	if g.state == Stable {
		// Kafka shows the protocol, like the members' metadata, only once
		// the assignment is out.
		d.Protocol = g.protocolName
	}
	for _, mid := range g.order {
		mem := g.members[mid]
		md := MemberDescription{MemberID: mem.id, InstanceID: mem.instanceID, ClientID: mem.clientID, ClientHost: mem.clientHost}
		if g.state == Stable {
			md.Metadata = mem.metadataFor(g.protocolName)
			md.Assignment = mem.assignment
		}
		d.Members = append(d.Members, md)
	}
	return d
}

// List returns every live group.
func (m *Manager) List() []Listing {
	var out []Listing
	for _, id := range m.GroupIDs() {
		g := m.groups[id]
		switch {
		case g.cg != nil:
			out = append(out, Listing{GroupID: id, ProtocolType: "consumer", State: g.cg.state(), Type: g.Type()})
		case g.state != Dead:
			out = append(out, Listing{GroupID: id, ProtocolType: g.protocolType, State: g.state.String(), Type: g.Type()})
		}
	}
	return append(out, m.shareListings()...)
}

// Delete removes an empty group and its offsets (DeleteGroups); reply gets
// the group's error code once the tombstones are durable.
func (m *Manager) Delete(now time.Time, id string, reply func(int16)) {
	if m.IsShareGroup(id) {
		m.deleteShare(id, reply)
		return
	}
	g, ok := m.groups[id]
	switch {
	case !ok || g.state == Dead:
		reply(kerr.GroupIDNotFound.Code)
		return
	case g.cg != nil && len(g.cg.members) > 0, g.state != Empty:
		reply(kerr.NonEmptyGroup.Code)
		return
	}
	recs := make([]Record, 0, len(g.offsets)+1)
	for _, tp := range sortedPartitions(g.offsets) {
		recs = append(recs, offsetTombstone(id, tp))
	}
	// As Kafka, the partitions only a transaction holds get a tombstone
	// too, which drops them from the transaction.
	for _, tp := range m.txn.dropGroup(id) {
		if _, ok := g.offsets[tp]; !ok {
			recs = append(recs, offsetTombstone(id, tp))
		}
	}
	if g.cg != nil {
		recs = append(recs, g.cg.tombstones(id)...)
	} else {
		recs = append(recs, groupTombstone(id))
	}
	g.transition(Dead, now)
	delete(m.groups, id)
	m.emit(recs, func(err error) {
		if err != nil {
			reply(WriteErrorCode(err))
			return
		}
		reply(0)
	})
}

// WriteErrorCode maps an append error to the code Kafka's coordinator
// answers with: a lost leadership (the runtime's NOT_COORDINATOR once the
// shard stopped) is NOT_COORDINATOR, a batch too big
// INVALID_COMMIT_OFFSET_SIZE, anything else (a replication shortfall, a
// timeout) COORDINATOR_NOT_AVAILABLE, so that the client retries.
func WriteErrorCode(err error) int16 {
	var ke *kerr.Error
	switch {
	case errors.As(err, &ke):
		switch ke.Code {
		case kerr.NotLeaderForPartition.Code, kerr.KafkaStorageError.Code, kerr.NotCoordinator.Code:
			return kerr.NotCoordinator.Code
		case kerr.MessageTooLarge.Code, kerr.RecordListTooLarge.Code, kerr.InvalidFetchSize.Code:
			return kerr.InvalidCommitOffsetSize.Code
		}
	}
	return kerr.CoordinatorNotAvailable.Code
}

func writeErrorCode(err error) int16 { return WriteErrorCode(err) }
