package group

import (
	"cmp"
	"encoding/binary"
	"maps"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// CommitOffsets handles an OffsetCommit request. reply gets one code per
// partition once the offsets are durable; they become visible to fetches
// only then.
func (m *Manager) CommitOffsets(now time.Time, req CommitRequest, reply func(CommitResult)) {
	all := func(code int16) {
		res := CommitResult{Errors: make([]int16, len(req.Partitions))}
		for i := range res.Errors {
			res.Errors[i] = code
		}
		reply(res)
	}
	if m.IsShareGroup(req.GroupID) {
		all(kerr.GroupIDNotFound.Code) // share groups keep no offsets here
		return
	}
	g, ok := m.groups[req.GroupID]
	if !ok {
		if req.GenerationID >= 0 || req.MemberID != "" {
			code := req.GroupNotFoundCode
			if code == 0 {
				code = kerr.IllegalGeneration.Code
			}
			all(code)
			return
		}
		// A "simple" group: offsets committed outside any membership
		// (assign() consumers, tools).
		g = newGroup(m, req.GroupID, now)
		m.groups[req.GroupID] = g
	}
	code := int16(0)
	if g.cg != nil {
		code = g.validateConsumerCommit(req.MemberID, req.InstanceID, req.GenerationID, false, req.Version, req.Partitions, m.topics())
	} else {
		code = g.validateCommit(req.MemberID, req.InstanceID, req.GenerationID, false)
	}
	if code != 0 {
		all(code)
		return
	}
	if g.cg == nil && g.state != Empty && req.MemberID != "" {
		g.members[req.MemberID].lastHeartbeat = now
	}
	res := CommitResult{Errors: make([]int16, len(req.Partitions))}
	recs, committed, values := m.offsetRecords(now, req.GroupID, req.Partitions, req.Retention, res.Errors)
	if len(recs) == 0 {
		reply(res)
		return
	}
	m.counters.OffsetCommits += int64(len(recs))
	var order int64 // set by emit, before Done can run
	order = m.emit(recs, func(err error) {
		if err != nil {
			fillErrors(res.Errors, writeErrorCode(err))
			reply(res)
			return
		}
		g := m.groupOrCreate(req.GroupID, now)
		for i, p := range committed {
			values[i].order = order
			g.offsets[p.TP] = values[i]
		}
		reply(res)
	})
}

// offsetRecords makes the offset records of a commit's partitions; a
// partition whose metadata is over offset.metadata.max.bytes gets
// OFFSET_METADATA_TOO_LARGE in codes instead. It returns the records with
// their partitions and values.
func (m *Manager) offsetRecords(now time.Time, groupID string, parts []CommitPartition, retention time.Duration, codes []int16) ([]Record, []CommitPartition, []OffsetAndMetadata) {
	var recs []Record
	var committed []CommitPartition
	var values []OffsetAndMetadata
	for i, p := range parts {
		md := ""
		if p.Metadata != nil {
			md = *p.Metadata
		}
		if len(md) > m.cfg.MaxMetadataSize {
			codes[i] = kerr.OffsetMetadataTooLarge.Code
			continue
		}
		v := OffsetAndMetadata{Offset: p.Offset, LeaderEpoch: p.LeaderEpoch, Metadata: md, CommitTime: now}
		if retention > 0 {
			v.ExpireTime = now.Add(retention)
		}
		recs = append(recs, offsetRecord(groupID, p.TP, v))
		committed = append(committed, p)
		values = append(values, v)
	}
	return recs, committed, values
}

// validateCommit is Kafka's classic-group commit check: empty groups take
// commits without a generation; otherwise the member and generation must be
// current, and a group waiting for its assignment refuses the commit. A
// transactional commit (TxnOffsetCommit) is not held to the group's state:
// before v3 it names no member, and it may come during a rebalance.
func (g *Group) validateCommit(memberID string, instanceID *string, generation int32, transactional bool) int16 {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable.Code
	}
	if generation < 0 && g.state == Empty {
		return 0
	}
	if generation >= 0 || memberID != "" || instanceID != nil {
		if code := g.validateMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.generation {
			return kerr.IllegalGeneration.Code
		}
	} else if !transactional && g.state != Empty {
		return kerr.UnknownMemberID.Code
	}
	if !transactional && g.state == CompletingRebalance {
		return kerr.RebalanceInProgress.Code
	}
	return 0
}

// FetchOffsets returns committed offsets; nil parts means all of the
// group's. An unknown group has no offsets (-1 for each asked partition).
// Offsets of transactions not completed are not seen; with requireStable a
// partition that has some answers UNSTABLE_OFFSET_COMMIT instead, Kafka's
// rule, so that a consumer starting after a transaction does not read from
// an offset the transaction is about to move.
func (m *Manager) FetchOffsets(groupID string, parts []kafka.TopicPartition, requireStable bool) []FetchedOffset {
	g, ok := m.groups[groupID]
	var offsets map[kafka.TopicPartition]OffsetAndMetadata
	if ok && g.state != Dead {
		offsets = g.offsets
	}
	if parts == nil {
		parts = sortedPartitions(offsets)
	}
	out := make([]FetchedOffset, 0, len(parts))
	for _, tp := range parts {
		v, ok := offsets[tp]
		if requireStable && m.txn.pending(groupID, tp) {
			out = append(out, FetchedOffset{TP: tp, Offset: kafka.NoOffset, LeaderEpoch: kafka.NoEpoch, Metadata: strPtr(""), ErrorCode: kerr.UnstableOffsetCommit.Code})
			continue
		}
		if !ok {
			out = append(out, FetchedOffset{TP: tp, Offset: kafka.NoOffset, LeaderEpoch: kafka.NoEpoch, Metadata: strPtr("")})
			continue
		}
		md := v.Metadata
		out = append(out, FetchedOffset{TP: tp, Offset: v.Offset, LeaderEpoch: v.LeaderEpoch, Metadata: &md})
	}
	return out
}

// DeleteOffsets handles OffsetDelete: reply gets a group-level code and one
// code per partition once the tombstones are durable. A group with members
// keeps the offsets of topics it subscribes to (GROUP_SUBSCRIBED_TO_TOPIC);
// one whose protocol the broker cannot read refuses (NON_EMPTY_GROUP).
func (m *Manager) DeleteOffsets(now time.Time, groupID string, parts []kafka.TopicPartition, reply func(int16, []int16)) {
	g, ok := m.groups[groupID]
	if !ok || g.state == Dead {
		reply(kerr.GroupIDNotFound.Code, nil)
		return
	}
	var subscribed map[string]bool
	if g.cg != nil {
		subscribed = g.cg.subscribedTopicNames()
	} else if g.state != Empty {
		if g.protocolType != "consumer" {
			reply(kerr.NonEmptyGroup.Code, nil)
			return
		}
		var known bool
		if subscribed, known = g.subscribedTopics(); !known {
			// Kafka counts every topic as subscribed when it cannot tell.
			reply(0, slices.Repeat([]int16{kerr.GroupSubscribedToTopic.Code}, len(parts)))
			return
		}
	}
	codes := make([]int16, len(parts))
	var recs []Record
	for i, tp := range parts {
		if subscribed[tp.Topic] {
			codes[i] = kerr.GroupSubscribedToTopic.Code
			continue
		}
		// The tombstone also drops the partition from open transactions,
		// as when Kafka replays it.
		_, committed := g.offsets[tp]
		if committed || m.txn.pending(groupID, tp) {
			delete(g.offsets, tp)
			m.txn.dropPartition(groupID, tp)
			recs = append(recs, offsetTombstone(groupID, tp))
		}
	}
	if len(recs) == 0 {
		reply(0, codes)
		return
	}
	m.counters.OffsetDeletions += int64(len(recs))
	m.emit(recs, func(err error) {
		if err != nil {
			reply(writeErrorCode(err), nil)
			return
		}
		reply(0, codes)
	})
}

// subscribedTopics reads the consumer-protocol subscriptions of the members
// for the selected protocol. Like Kafka it reads only the version-0 prefix
// every version shares (version, topics), so later protocol versions parse
// too; known is false when some member's metadata does not parse.
func (g *Group) subscribedTopics() (topics map[string]bool, known bool) {
	topics = make(map[string]bool)
	for _, mem := range g.members {
		names, ok := parseSubscriptionTopics(mem.metadataFor(g.protocolName))
		if !ok {
			return nil, false
		}
		for _, t := range names {
			topics[t] = true
		}
	}
	return topics, true
}

// parseSubscriptionTopics reads the topics of a ConsumerProtocol
// subscription: int16 version, int32 count, then int16-length strings.
func parseSubscriptionTopics(b []byte) ([]string, bool) {
	if len(b) < 6 || int16(binary.BigEndian.Uint16(b)) < 0 {
		return nil, false
	}
	n := int32(binary.BigEndian.Uint32(b[2:]))
	b = b[6:]
	if n < 0 || int(n) > len(b)/2 {
		return nil, false
	}
	topics := make([]string, 0, n)
	for range n {
		if len(b) < 2 {
			return nil, false
		}
		l := int(int16(binary.BigEndian.Uint16(b)))
		b = b[2:]
		if l < 0 || l > len(b) {
			return nil, false
		}
		topics = append(topics, string(b[:l]))
		b = b[l:]
	}
	return topics, true
}

// ExpireOffsets removes offsets past their retention, as Kafka does: the
// offsets of an empty group expire offsets.retention.minutes after the
// group became empty (after the commit, for a group that never had a
// protocol); a stable consumer group whose subscriptions the broker can read
// loses the offsets of topics it does not subscribe to; other groups keep
// theirs. An empty group left with no offsets is deleted.
func (m *Manager) ExpireOffsets(now time.Time) {
	for _, id := range m.GroupIDs() {
		g := m.groups[id]
		if g.state == Dead {
			continue
		}
		var subscribed map[string]bool
		switch {
		case g.cg != nil:
			// A consumer group's offsets expire by their commit time,
			// except those of topics it subscribes to (Kafka's rule).
			subscribed = g.cg.subscribedTopicNames()
		case g.state == Empty || g.protocolType == "":
		case g.protocolType == "consumer" && g.state == Stable:
			var known bool
			if subscribed, known = g.subscribedTopics(); !known {
				continue
			}
		default:
			continue
		}
		var recs []Record
		for _, tp := range sortedPartitions(g.offsets) {
			v := g.offsets[tp]
			// An offset a transaction may still replace waits for it.
			if subscribed[tp.Topic] || m.txn.pending(id, tp) {
				continue
			}
			base := v.CommitTime
			if g.cg == nil && g.state == Empty && g.protocolType != "" && !g.stateSince.IsZero() {
				base = g.stateSince
			}
			expired := now.Sub(base) >= m.cfg.OffsetsRetention
			if !v.ExpireTime.IsZero() {
				expired = !now.Before(v.ExpireTime)
			}
			if expired {
				m.counters.OffsetExpirations++
				delete(g.offsets, tp)
				recs = append(recs, offsetTombstone(id, tp))
			}
		}
		if g.cg != nil {
			if len(g.cg.members) == 0 && len(g.offsets) == 0 && !m.txn.open(id) {
				recs = append(recs, g.cg.tombstones(id)...)
				delete(m.groups, id)
			}
		} else if g.state == Empty && len(g.offsets) == 0 && len(g.pending) == 0 && !m.txn.open(id) {
			g.transition(Dead, now)
			delete(m.groups, id)
			recs = append(recs, groupTombstone(id))
		}
		if len(recs) > 0 {
			m.emit(recs, nil)
		}
	}
}

func sortedPartitions(offsets map[kafka.TopicPartition]OffsetAndMetadata) []kafka.TopicPartition {
	return slices.SortedFunc(maps.Keys(offsets), compareTP)
}

func compareTP(a, b kafka.TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}
