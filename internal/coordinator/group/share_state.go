package group

// The share state of a share group's partitions (KIP-932, Kafka 4.1+):
// before a partition is assigned, the share coordinator must hold its
// state. The group coordinator keeps, in ShareGroupStatePartitionMetadata,
// which partitions are being initialized, are initialized, or are being
// deleted; a heartbeat that subscribes to partitions not yet initialized
// asks for them (ShareHeartbeatResult.Initialize), and the assignor only
// hands out initialized ones.

import (
	"maps"
	"slices"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// shareInitTopic is a topic's partitions in the state metadata, with the
// time they were asked for (initializing ones; replay sets the load time,
// as Kafka).
type shareInitTopic struct {
	name       string
	partitions []int32 // sorted, no duplicates
	since      time.Time
	// startAtZero: partitions added to a topic the group already has start
	// at offset 0, so none of their records is skipped (Kafka 4.4's
	// initialize request); a topic new to the group starts where
	// share.auto.offset.reset says.
	startAtZero bool
}

// shareStateMeta is a value: changes make a new one.
type shareStateMeta struct {
	initializing map[kafka.UUID]shareInitTopic
	initialized  map[kafka.UUID]shareInitTopic
	deleting     map[kafka.UUID]string
}

func (s *shareStateMeta) clone() *shareStateMeta {
	if s == nil {
		return &shareStateMeta{initializing: map[kafka.UUID]shareInitTopic{}, initialized: map[kafka.UUID]shareInitTopic{}, deleting: map[kafka.UUID]string{}}
	}
	return &shareStateMeta{initializing: maps.Clone(s.initializing), initialized: maps.Clone(s.initialized), deleting: maps.Clone(s.deleting)}
}

// initializedBelow is the initialized partitions of a topic below n (its
// partition count), sorted.
func (s *shareStateMeta) initializedBelow(id kafka.UUID, n int32) []int32 {
	if s == nil {
		return nil
	}
	var out []int32
	for _, p := range s.initialized[id].partitions {
		if p < n {
			out = append(out, p)
		}
	}
	return out
}

// unionPartitions merges two sorted partition lists.
func unionPartitions(a, b []int32) []int32 {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// minusPartitions is a without b.
func minusPartitions(a, b []int32) []int32 {
	var out []int32
	for _, p := range a {
		if !slices.Contains(b, p) {
			out = append(out, p)
		}
	}
	return out
}

// initializedPending reports whether initialized partitions of subscribed
// topics are not all in the target assignment: the group epoch is bumped
// to hand them out (Kafka's initializedAssignmentPending). Topics the
// image no longer has are left out: a deleted topic, or one re-created
// under the same name, must not bump the epoch on every heartbeat.
func (sg *shareGroup) initializedPending(topics Topics) bool {
	if len(sg.members) == 0 || sg.state == nil || len(sg.state.initialized) == 0 {
		return false
	}
	subscribed := sg.subscribedNames(nil, "")
	if len(subscribed) == 0 {
		return false
	}
	assigned := map[kafka.UUID][]int32{}
	for _, a := range sg.target {
		for t, parts := range a {
			assigned[t] = unionPartitions(assigned[t], parts)
		}
	}
	for id := range sg.state.initialized {
		t, ok := topics.ByID(id)
		if ok && subscribed[t.Name] && !slices.Equal(sg.state.initializedBelow(id, t.Partitions), assigned[id]) {
			return true
		}
	}
	return false
}

// initChanges is the partitions of the subscribed topics that are neither
// initialized nor asked for less than retry ago (Kafka's
// subscribedTopicsChangeMap).
func (s *shareStateMeta) initChanges(now time.Time, retry time.Duration, subscribed map[string]bool, topics Topics) map[kafka.UUID]shareInitTopic {
	out := map[kafka.UUID]shareInitTopic{}
	for _, name := range slices.Sorted(maps.Keys(subscribed)) {
		t, ok := topics.ByName(name)
		if !ok {
			continue
		}
		var have []int32
		if s != nil {
			have = s.initialized[t.ID].partitions
			if it, ok := s.initializing[t.ID]; ok && now.Sub(it.since) < retry {
				have = unionPartitions(have, it.partitions)
			}
		}
		if len(have) > 0 && int32(len(have)) >= t.Partitions {
			continue
		}
		var want []int32
		for p := range t.Partitions {
			if !slices.Contains(have, p) {
				want = append(want, p)
			}
		}
		if len(want) > 0 {
			out[t.ID] = shareInitTopic{name: t.Name, partitions: want, since: now, startAtZero: len(have) > 0}
		}
	}
	return out
}

// withInitializing adds changes to the initializing topics, less what is
// initialized; a topic being initialized again is no longer deleting
// (Kafka's addInitializingTopicsRecords).
func (s *shareStateMeta) withInitializing(changes map[kafka.UUID]shareInitTopic) *shareStateMeta {
	n := s.clone()
	for id, c := range changes {
		cur := n.initializing[id]
		parts := minusPartitions(unionPartitions(cur.partitions, c.partitions), n.initialized[id].partitions)
		if len(parts) == 0 {
			delete(n.initializing, id)
			continue
		}
		n.initializing[id] = shareInitTopic{name: c.name, partitions: parts, since: c.since}
		delete(n.deleting, id)
	}
	return n
}

// withInitialized moves done from initializing to initialized (Kafka's
// initializeShareGroupState); names come from topics, else from what the
// metadata holds.
func (s *shareStateMeta) withInitialized(now time.Time, done map[kafka.UUID][]int32, topics Topics) *shareStateMeta {
	n := s.clone()
	for id, parts := range done {
		if it, ok := n.initializing[id]; ok {
			it.partitions = minusPartitions(it.partitions, parts)
			if len(it.partitions) == 0 {
				delete(n.initializing, id)
			} else {
				n.initializing[id] = it
			}
		}
		name := n.topicName(id, topics)
		cur := n.initialized[id]
		n.initialized[id] = shareInitTopic{name: name, partitions: unionPartitions(cur.partitions, parts), since: now}
	}
	return n
}

// withoutInitializing drops failed partitions from initializing, so the
// next heartbeat asks again (Kafka's uninitializeShareGroupState).
func (s *shareStateMeta) withoutInitializing(failed map[kafka.UUID][]int32) *shareStateMeta {
	n := s.clone()
	for id, parts := range failed {
		it, ok := n.initializing[id]
		if !ok {
			continue
		}
		it.partitions = minusPartitions(it.partitions, parts)
		if len(it.partitions) == 0 {
			delete(n.initializing, id)
		} else {
			n.initializing[id] = it
		}
	}
	return n
}

func (s *shareStateMeta) topicName(id kafka.UUID, topics Topics) string {
	if t, ok := topics.ByID(id); ok {
		return t.Name
	}
	if s != nil {
		if it, ok := s.initializing[id]; ok {
			return it.name
		}
		if it, ok := s.initialized[id]; ok {
			return it.name
		}
		if name, ok := s.deleting[id]; ok {
			return name
		}
	}
	return ""
}

// stateTopics lists a topic map as a request's topics, by topic id.
func stateTopics(m map[kafka.UUID]shareInitTopic) []ShareStateTopic {
	out := make([]ShareStateTopic, 0, len(m))
	for _, id := range slices.SortedFunc(maps.Keys(m), compareUUID) {
		out = append(out, ShareStateTopic{TopicID: id, TopicName: m[id].name, Partitions: slices.Clone(m[id].partitions), StartAtZero: m[id].startAtZero})
	}
	return out
}

// maybeInitRequest writes the initializing partitions a heartbeat needs and
// returns the request for them, or nil (Kafka's
// maybeCreateInitializeShareGroupStateRequest).
func (m *Manager) maybeInitRequest(now time.Time, sg *shareGroup, topics Topics) *ShareStateRequest {
	if next := sg.state.withoutDeletedTopics(topics); next != nil {
		m.sgDo(sg, opShareState{next})
	}
	changes := sg.state.initChanges(now, m.shareCfg().InitializeRetryInterval, sg.subscribedNames(nil, ""), topics)
	if len(changes) == 0 {
		return nil
	}
	m.sgDo(sg, opShareState{sg.state.withInitializing(changes)})
	return &ShareStateRequest{GroupID: sg.id, GroupEpoch: sg.groupEpoch, Topics: stateTopics(changes)}
}

// ShareStateInitialized records that the share persister initialized
// these partitions of a group; done runs once the record is durable. The
// next heartbeat hands them out.
func (m *Manager) ShareStateInitialized(now time.Time, groupID string, topics []ShareStateTopic, done func(error)) {
	m.shareStateChange(now, groupID, topics, done, func(s *shareStateMeta, parts map[kafka.UUID][]int32) *shareStateMeta {
		return s.withInitialized(now, parts, m.topics())
	})
}

// ShareStateUninitialized records that the share persister failed to
// initialize these partitions: they leave the initializing set, so that
// the next heartbeat asks for them again.
func (m *Manager) ShareStateUninitialized(now time.Time, groupID string, topics []ShareStateTopic, done func(error)) {
	m.shareStateChange(now, groupID, topics, done, func(s *shareStateMeta, parts map[kafka.UUID][]int32) *shareStateMeta {
		if s == nil || len(s.initializing) == 0 {
			return nil
		}
		return s.withoutInitializing(parts)
	})
}

func (m *Manager) shareStateChange(now time.Time, groupID string, topics []ShareStateTopic, done func(error), change func(*shareStateMeta, map[kafka.UUID][]int32) *shareStateMeta) {
	m.cgNow = now
	sg, ok := m.share[groupID]
	if done == nil {
		done = func(error) {}
	}
	if !ok || len(topics) == 0 {
		done(nil)
		return
	}
	parts := make(map[kafka.UUID][]int32, len(topics))
	for _, t := range topics {
		parts[t.TopicID] = unionPartitions(parts[t.TopicID], t.Partitions)
	}
	if next := change(sg.state, parts); next != nil {
		m.sgDo(sg, opShareState{next})
	}
	m.cgFlush(done)
}

// withoutDeletedTopics drops the topics the image no longer has, or nil
// when there are none: Kafka drops them when it sees the deletion
// (maybeCleanupShareGroupState); this state machine sees topics only
// through heartbeats, so the group's next heartbeat drops them.
func (s *shareStateMeta) withoutDeletedTopics(topics Topics) *shareStateMeta {
	if s == nil {
		return nil
	}
	gone := func(id kafka.UUID) bool { _, ok := topics.ByID(id); return !ok }
	var n *shareStateMeta
	for _, m := range []map[kafka.UUID]shareInitTopic{s.initializing, s.initialized} {
		for id := range m {
			if gone(id) && n == nil {
				n = s.clone()
			}
		}
	}
	for id := range s.deleting {
		if gone(id) && n == nil {
			n = s.clone()
		}
	}
	if n == nil {
		return nil
	}
	for _, m := range []map[kafka.UUID]shareInitTopic{n.initializing, n.initialized} {
		maps.DeleteFunc(m, func(id kafka.UUID, _ shareInitTopic) bool { return gone(id) })
	}
	maps.DeleteFunc(n.deleting, func(id kafka.UUID, _ string) bool { return gone(id) })
	return n
}
