package group

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// txnOffsets are the offsets of transactions not yet completed (Kafka's
// pendingTransactionalOffsets and openTransactionsByGroup): written by
// TxnOffsetCommit as transactional batches of their producer, invisible to
// OffsetFetch, made committed by the producer's commit marker or dropped by
// its abort marker.
type txnOffsets struct {
	// byProducer holds each producer's offsets by group and partition.
	byProducer map[int64]map[string]map[kafka.TopicPartition]OffsetAndMetadata
	// byGroup holds the producers with offsets pending in each group.
	byGroup map[string]map[int64]struct{}
}

func newTxnOffsets() txnOffsets {
	return txnOffsets{
		byProducer: make(map[int64]map[string]map[kafka.TopicPartition]OffsetAndMetadata),
		byGroup:    make(map[string]map[int64]struct{}),
	}
}

func (t *txnOffsets) put(producerID int64, group string, tp kafka.TopicPartition, v OffsetAndMetadata) {
	groups := t.byProducer[producerID]
	if groups == nil {
		groups = make(map[string]map[kafka.TopicPartition]OffsetAndMetadata)
		t.byProducer[producerID] = groups
	}
	if groups[group] == nil {
		groups[group] = make(map[kafka.TopicPartition]OffsetAndMetadata)
	}
	groups[group][tp] = v
	if t.byGroup[group] == nil {
		t.byGroup[group] = make(map[int64]struct{})
	}
	t.byGroup[group][producerID] = struct{}{}
}

// pending reports whether some open transaction holds an offset of the
// group's partition.
func (t *txnOffsets) pending(group string, tp kafka.TopicPartition) bool {
	for pid := range t.byGroup[group] {
		if _, ok := t.byProducer[pid][group][tp]; ok {
			return true
		}
	}
	return false
}

// open reports whether some transaction holds offsets of the group.
func (t *txnOffsets) open(group string) bool { return len(t.byGroup[group]) > 0 }

// dropPartition removes the partition's offsets from every transaction (a
// tombstone of the partition was written). The transactions stay open.
func (t *txnOffsets) dropPartition(group string, tp kafka.TopicPartition) {
	for pid := range t.byGroup[group] {
		delete(t.byProducer[pid][group], tp)
	}
}

// dropGroup removes the group's offsets from every transaction and returns
// their partitions, sorted.
func (t *txnOffsets) dropGroup(group string) []kafka.TopicPartition {
	var parts []kafka.TopicPartition
	for pid := range t.byGroup[group] {
		for tp := range t.byProducer[pid][group] {
			if !slices.Contains(parts, tp) {
				parts = append(parts, tp)
			}
		}
		t.forget(pid, group)
	}
	delete(t.byGroup, group)
	slices.SortFunc(parts, compareTP)
	return parts
}

// take removes and returns a producer's offsets by group.
func (t *txnOffsets) take(producerID int64) map[string]map[kafka.TopicPartition]OffsetAndMetadata {
	groups := t.byProducer[producerID]
	for group := range groups {
		delete(t.byGroup[group], producerID)
		if len(t.byGroup[group]) == 0 {
			delete(t.byGroup, group)
		}
	}
	delete(t.byProducer, producerID)
	return groups
}

func (t *txnOffsets) forget(producerID int64, group string) {
	delete(t.byProducer[producerID], group)
	if len(t.byProducer[producerID]) == 0 {
		delete(t.byProducer, producerID)
	}
}

// CommitTransactionalOffsets handles a TxnOffsetCommit: reply gets one code
// per partition once the offsets are durable, written as a transactional
// batch of the producer; they stay pending, invisible to OffsetFetch, until
// CompleteTransaction. A group that does not exist is created empty for a
// commit without a generation, as Kafka's coordinator does.
func (m *Manager) CommitTransactionalOffsets(now time.Time, req TxnCommitRequest, reply func(CommitResult)) {
	all := func(code int16) { reply(CommitResult{Errors: slices.Repeat([]int16{code}, len(req.Partitions))}) }
	if req.GroupID == "" {
		all(kerr.InvalidGroupID.Code)
		return
	}
	if m.IsShareGroup(req.GroupID) {
		all(kerr.GroupIDNotFound.Code)
		return
	}
	g, ok := m.groups[req.GroupID]
	if !ok {
		if req.GenerationID >= 0 {
			all(kerr.IllegalGeneration.Code)
			return
		}
		g = newGroup(m, req.GroupID, now)
		m.groups[req.GroupID] = g
	}
	code := int16(0)
	if g.cg != nil {
		code = g.validateConsumerCommit(req.MemberID, req.InstanceID, req.GenerationID, true, req.Version, req.Partitions, m.topics())
	} else {
		code = g.validateCommit(req.MemberID, req.InstanceID, req.GenerationID, true)
	}
	if code != 0 {
		all(code)
		return
	}
	res := CommitResult{Errors: make([]int16, len(req.Partitions))}
	recs, committed, values := m.offsetRecords(now, req.GroupID, req.Partitions, 0, res.Errors)
	if len(recs) == 0 {
		reply(res)
		return
	}
	var order int64 // set by emitWrite, before Done can run
	order = m.emitWrite(Write{Records: recs, Transaction: &Producer{ID: req.ProducerID, Epoch: req.ProducerEpoch}, Done: func(err error) {
		if err != nil {
			fillErrors(res.Errors, txnWriteErrorCode(err))
			reply(res)
			return
		}
		m.groupOrCreate(req.GroupID, now)
		for i, p := range committed {
			values[i].order = order
			m.txn.put(req.ProducerID, req.GroupID, p.TP, values[i])
		}
		reply(res)
	}})
}

// CompleteTransaction applies the result of a producer's transaction once
// its marker is durable in the partition (or replayed): commit makes its
// pending offsets committed, abort drops them. A transaction's offset
// replaces a group's committed one only if its record came later in the
// log, as Kafka does: a plain commit written after it (before the marker)
// keeps winning, as it would once compaction of the partition left only
// the later record. The marker is the record, so nothing is written.
func (m *Manager) CompleteTransaction(now time.Time, producerID int64, commit bool) {
	groups := m.txn.take(producerID)
	if !commit {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(groups)) {
		g := m.groupOrCreate(id, now)
		for tp, v := range groups[id] {
			if cur, ok := g.offsets[tp]; !ok || v.order > cur.order {
				g.offsets[tp] = v
			}
		}
	}
}

// groupOrCreate returns the group, creating it empty (a "simple" group that
// only holds offsets) when it does not exist.
func (m *Manager) groupOrCreate(id string, now time.Time) *Group {
	g, ok := m.groups[id]
	if !ok {
		g = newGroup(m, id, now)
		m.groups[id] = g
	}
	return g
}

// txnWriteErrorCode is WriteErrorCode for a transactional write, except
// that the partition's verdict on the producer goes back as it is (Kafka
// passes such errors through): a fenced or stale producer must learn it.
func txnWriteErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke.Code {
		case kerr.InvalidProducerEpoch.Code, kerr.ProducerFenced.Code, kerr.InvalidTxnState.Code,
			kerr.InvalidProducerIDMapping.Code, kerr.TransactionAbortable.Code:
			return ke.Code
		}
	}
	return WriteErrorCode(err)
}

func fillErrors(codes []int16, code int16) {
	for i := range codes {
		if codes[i] == 0 {
			codes[i] = code
		}
	}
}
