package share

import (
	"errors"
	"fmt"
)

// partitionState is what the Manager holds for one share partition: the
// state of Kafka's four maps for its key (shareStateMap, leaderEpochMap,
// stateEpochMap, snapshotUpdateCount).
type partitionState struct {
	offset Offset
	// leaderEpoch is the highest leader epoch any record of the key
	// carried: writes and reads below it are fenced.
	leaderEpoch int32
	// stateEpoch is the highest state epoch of the key's snapshots, when
	// one was seen (hasStateEpoch): updates carry none.
	stateEpoch    int32
	hasStateEpoch bool
	// updates counts the updates since the last snapshot that reset it.
	// Invariant: as Kafka, a snapshot resets it only once it has reached
	// SnapshotUpdateRecordsPerSnapshot.
	updates int
}

// record is one decoded __share_group_state record.
type record struct {
	typ      int16
	key      Key
	snapshot *SnapshotValue // typ snapshot; nil with update nil: a tombstone
	update   *UpdateValue   // typ update
}

func (r record) encode() Record {
	k := AppendKey(nil, r.typ, r.key)
	switch {
	case r.snapshot != nil:
		return Record{Key: k, Value: r.snapshot.AppendTo(nil)}
	case r.update != nil:
		return Record{Key: k, Value: r.update.AppendTo(nil)}
	}
	return Record{Key: k}
}

var errUpdateTombstone = errors.New("tombstone of a ShareUpdate key")

// decodeRecord reads a record; ok is false for a record type this
// coordinator does not know (skipped, as Kafka's loader skips it).
func decodeRecord(key, value []byte) (r record, ok bool, err error) {
	typ, k, err := DecodeKey(key)
	if err != nil {
		return record{}, false, err
	}
	r = record{typ: typ, key: k}
	switch {
	case typ != RecordTypeSnapshot && typ != RecordTypeUpdate:
		return record{}, false, nil
	case value == nil && typ == RecordTypeUpdate:
		return record{}, false, fmt.Errorf("%s: %w", k, errUpdateTombstone)
	case value == nil:
		return r, true, nil
	case typ == RecordTypeSnapshot:
		v, err := DecodeSnapshotValue(value)
		if err != nil {
			return record{}, false, fmt.Errorf("%s: %w", k, err)
		}
		r.snapshot = &v
	default:
		v, err := DecodeUpdateValue(value)
		if err != nil {
			return record{}, false, fmt.Errorf("%s: %w", k, err)
		}
		r.update = &v
	}
	return r, true, nil
}

// apply returns the key's state after r (nil once deleted), as Kafka's
// ShareCoordinatorShard.replay changes it; st is not modified.
func apply(st *partitionState, r record, perSnapshot int) *partitionState {
	switch {
	case r.snapshot != nil:
		return applySnapshot(st, r.snapshot, perSnapshot)
	case r.update != nil:
		return applyUpdate(st, r.update)
	}
	return nil
}

func applySnapshot(st *partitionState, v *SnapshotValue, perSnapshot int) *partitionState {
	next := &partitionState{leaderEpoch: v.LeaderEpoch, stateEpoch: v.StateEpoch, hasStateEpoch: true}
	if st != nil {
		next.leaderEpoch = max(st.leaderEpoch, v.LeaderEpoch)
		if st.hasStateEpoch {
			next.stateEpoch = max(st.stateEpoch, v.StateEpoch)
		}
		next.updates = st.updates
	}
	next.offset = Offset{
		SnapshotEpoch: v.SnapshotEpoch, StateEpoch: v.StateEpoch, LeaderEpoch: v.LeaderEpoch,
		StartOffset: v.StartOffset, DeliveryCompleteCount: v.DeliveryCompleteCount,
		CreateTimestamp: v.CreateTimestamp, WriteTimestamp: v.WriteTimestamp, StateBatches: v.StateBatches,
	}
	if next.updates >= perSnapshot {
		next.updates = 0
	}
	return next
}

func applyUpdate(st *partitionState, v *UpdateValue) *partitionState {
	if st == nil {
		// An update with no snapshot before it (Kafka's fromRecord): no
		// state epoch, no timestamps.
		return &partitionState{leaderEpoch: v.LeaderEpoch, updates: 1, offset: Offset{
			SnapshotEpoch: v.SnapshotEpoch, LeaderEpoch: v.LeaderEpoch, StartOffset: v.StartOffset,
			DeliveryCompleteCount: v.DeliveryCompleteCount, StateBatches: v.StateBatches,
		}}
	}
	next := *st
	next.leaderEpoch = max(st.leaderEpoch, v.LeaderEpoch)
	next.updates++
	cur := st.offset
	start := v.StartOffset
	if start == -1 {
		start = cur.StartOffset
	}
	leader := v.LeaderEpoch
	if leader == -1 {
		leader = cur.LeaderEpoch
	}
	next.offset = Offset{
		SnapshotEpoch: cur.SnapshotEpoch, StateEpoch: cur.StateEpoch, LeaderEpoch: leader,
		StartOffset: start, DeliveryCompleteCount: v.DeliveryCompleteCount,
		CreateTimestamp: cur.CreateTimestamp, WriteTimestamp: cur.WriteTimestamp,
		StateBatches: CombineStateBatches(cur.StateBatches, v.StateBatches, start),
	}
	return &next
}

// stateRecord is Kafka's generateShareStateRecord: the record a write (or
// a read moving the leader epoch, leaderUpdate) appends over st, a
// snapshot once perSnapshot updates were written since the last one, else
// an update holding the write's own batches.
func stateRecord(st *partitionState, req WriteRequest, leaderUpdate bool, perSnapshot int, nowMs int64) record {
	cur := st.offset
	leader := cur.LeaderEpoch
	if leaderUpdate {
		leader = req.LeaderEpoch
	}
	start := max(req.StartOffset, cur.StartOffset)
	count := req.DeliveryCompleteCount
	switch {
	case req.StartOffset == cur.StartOffset:
		count = max(req.DeliveryCompleteCount, cur.DeliveryCompleteCount)
	case req.StartOffset < cur.StartOffset:
		count = cur.DeliveryCompleteCount
	}
	if st.updates >= perSnapshot {
		return record{typ: RecordTypeSnapshot, key: req.Key, snapshot: &SnapshotValue{
			SnapshotEpoch: cur.SnapshotEpoch + 1, StateEpoch: cur.StateEpoch, LeaderEpoch: leader,
			StartOffset: start, DeliveryCompleteCount: count, CreateTimestamp: nowMs, WriteTimestamp: nowMs,
			StateBatches: CombineStateBatches(cur.StateBatches, req.StateBatches, start),
		}}
	}
	return record{typ: RecordTypeUpdate, key: req.Key, update: &UpdateValue{
		SnapshotEpoch: cur.SnapshotEpoch, LeaderEpoch: leader, StartOffset: start, DeliveryCompleteCount: count,
		StateBatches: CombineStateBatches(nil, req.StateBatches, start),
	}}
}
