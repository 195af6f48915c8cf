package share

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// knownPartition is Kafka's metadata check: the share partition's topic
// and partition must exist.
func (m *Manager) knownPartition(k Key) bool {
	if m.cfg.PartitionCount == nil {
		return false
	}
	n, ok := m.cfg.PartitionCount(k.TopicID)
	return ok && k.Partition < n
}

// Initialize serves one partition of an InitializeShareGroupState: it
// writes a snapshot of the given state epoch and start offset with no
// batches, replacing any state of a state epoch not above the request's.
func (m *Manager) Initialize(now time.Time, req InitializeRequest, reply func(Result)) {
	st := m.states[req.Key]
	switch {
	case req.Key.Partition < 0:
		reply(fail(kerr.InvalidRequest.Code, msgNegativePartition))
	case req.StateEpoch < 0:
		reply(fail(kerr.InvalidRequest.Code, msgNegativeStateEpoch))
	case m.restoring(req.Key):
		reply(fail(kerr.CoordinatorNotAvailable.Code, msgRestoring))
	case st != nil && st.hasStateEpoch && st.stateEpoch > req.StateEpoch:
		reply(fail(kerr.FencedStateEpoch.Code, ""))
	case !m.knownPartition(req.Key):
		reply(fail(kerr.UnknownTopicOrPartition.Code, ""))
	default:
		epoch := int32(0)
		if st != nil {
			epoch = st.offset.SnapshotEpoch + 1
		}
		count := int32(0)
		if req.StartOffset == -1 {
			count = noDeliveryCompleteCount
		}
		nowMs := now.UnixMilli()
		m.emit(record{typ: RecordTypeSnapshot, key: req.Key, snapshot: &SnapshotValue{
			SnapshotEpoch: epoch, StateEpoch: req.StateEpoch, StartOffset: req.StartOffset,
			DeliveryCompleteCount: count, CreateTimestamp: nowMs, WriteTimestamp: nowMs, StateBatches: []StateBatch{},
		}}, func(err error) { reply(writeResult(err)) })
	}
}

// Write serves one partition of a WriteShareGroupState: the batches are
// merged into the state (CombineStateBatches) and the start offset only
// moves forward. A leader epoch or state epoch below the highest seen is
// fenced; the state must have been initialized.
func (m *Manager) Write(now time.Time, req WriteRequest, reply func(Result)) {
	st := m.states[req.Key]
	switch {
	case req.Key.Partition < 0:
		reply(fail(kerr.InvalidRequest.Code, msgNegativePartition))
	case req.LeaderEpoch < 0:
		reply(fail(kerr.InvalidRequest.Code, msgNegativeLeaderEpoch))
	case req.StateEpoch < 0:
		reply(fail(kerr.InvalidRequest.Code, msgNegativeStateEpoch))
	case m.restoring(req.Key):
		reply(fail(kerr.CoordinatorNotAvailable.Code, msgRestoring))
	case st == nil:
		reply(fail(kerr.InvalidRequest.Code, msgWriteUninitialized))
	case st.leaderEpoch > req.LeaderEpoch:
		reply(fail(kerr.FencedLeaderEpoch.Code, ""))
	case st.hasStateEpoch && st.stateEpoch > req.StateEpoch:
		reply(fail(kerr.FencedStateEpoch.Code, ""))
	case !m.knownPartition(req.Key):
		reply(fail(kerr.UnknownTopicOrPartition.Code, ""))
	default:
		r := stateRecord(st, req, false, m.cfg.SnapshotUpdateRecordsPerSnapshot, now.UnixMilli())
		m.emit(r, func(err error) { reply(writeResult(err)) })
	}
}

// Read serves one partition of a ReadShareGroupState. A leader epoch above
// the highest seen is recorded first (a write of the state with that epoch,
// Kafka's readStateAndMaybeUpdateLeaderEpoch), and the answer waits for it.
func (m *Manager) Read(now time.Time, req ReadRequest, reply func(ReadResult)) {
	st := m.states[req.Key]
	refuse := func(code int16, msg string) { reply(ReadResult{Result: fail(code, msg)}) }
	switch {
	case req.Key.Partition < 0:
		refuse(kerr.InvalidRequest.Code, msgNegativePartition)
	case req.LeaderEpoch < 0:
		refuse(kerr.InvalidRequest.Code, msgNegativeLeaderEpoch)
	case m.restoring(req.Key):
		refuse(kerr.CoordinatorNotAvailable.Code, msgRestoring)
	case st == nil:
		refuse(kerr.InvalidRequest.Code, msgReadUninitialized)
	case st.leaderEpoch > req.LeaderEpoch:
		refuse(kerr.FencedLeaderEpoch.Code, "")
	case !m.knownPartition(req.Key):
		refuse(kerr.UnknownTopicOrPartition.Code, "")
	default:
		o := st.offset
		res := ReadResult{StateEpoch: o.StateEpoch, StartOffset: o.StartOffset, StateBatches: o.StateBatches}
		if st.leaderEpoch == req.LeaderEpoch {
			reply(res)
			return
		}
		w := WriteRequest{Key: req.Key, StateEpoch: o.StateEpoch, LeaderEpoch: req.LeaderEpoch,
			StartOffset: o.StartOffset, DeliveryCompleteCount: o.DeliveryCompleteCount}
		m.emit(stateRecord(st, w, true, m.cfg.SnapshotUpdateRecordsPerSnapshot, now.UnixMilli()), func(err error) {
			if err != nil {
				res = ReadResult{Result: writeResult(err)}
			}
			reply(res)
		})
	}
}

// ReadSummary serves one partition of a ReadShareGroupStateSummary; it
// writes nothing. It reads the durable state, as Kafka runs it as a read
// operation (on the last committed offset): writes in flight are not seen.
// An uninitialized partition answers start offset -1 and epochs 0, as
// Kafka.
func (m *Manager) ReadSummary(req ReadRequest) SummaryResult {
	switch {
	case req.Key.Partition < 0:
		return SummaryResult{Result: fail(kerr.InvalidRequest.Code, msgNegativePartition)}
	case !m.knownPartition(req.Key):
		return SummaryResult{Result: fail(kerr.UnknownTopicOrPartition.Code, "")}
	}
	st := m.states[req.Key]
	if fl, ok := m.inflight[req.Key]; ok {
		st = fl.durable
	}
	if st == nil {
		return SummaryResult{StartOffset: -1, DeliveryCompleteCount: noDeliveryCompleteCount}
	}
	o := st.offset
	return SummaryResult{StateEpoch: o.StateEpoch, LeaderEpoch: o.LeaderEpoch, StartOffset: o.StartOffset,
		DeliveryCompleteCount: o.DeliveryCompleteCount}
}

// Delete serves one partition of a DeleteShareGroupState: a tombstone of
// the state's snapshot key. Deleting a partition without state succeeds
// and writes nothing.
func (m *Manager) Delete(req Key, reply func(Result)) {
	switch {
	case req.Partition < 0:
		reply(fail(kerr.InvalidRequest.Code, msgNegativePartition))
	case !m.knownPartition(req):
		reply(fail(kerr.UnknownTopicOrPartition.Code, ""))
	case m.restoring(req):
		reply(fail(kerr.CoordinatorNotAvailable.Code, msgRestoring))
	case m.states[req] == nil:
		reply(Result{})
	default:
		m.emit(record{typ: RecordTypeSnapshot, key: req}, func(err error) { reply(writeResult(err)) })
	}
}

// CleanupTopics writes tombstones for the state of every share partition
// of the given (deleted) topics: Kafka's maybeCleanupShareState.
func (m *Manager) CleanupTopics(topicIDs []kafka.UUID) {
	if m.stopped || len(topicIDs) == 0 {
		return
	}
	deleted := make(map[kafka.UUID]bool, len(topicIDs))
	for _, id := range topicIDs {
		deleted[id] = true
	}
	for _, k := range m.Keys() {
		if deleted[k.TopicID] && !m.restoring(k) {
			m.emit(record{typ: RecordTypeSnapshot, key: k}, nil)
		}
	}
}
