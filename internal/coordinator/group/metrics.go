package group

import "github.com/sluice-io/sluice/internal/kafka"

// Counters are a Manager's cumulative counts behind Kafka's
// group-coordinator-metrics "-count" sensors, since the Manager was built.
// Only live operations count: replaying the log counts nothing, as in
// Kafka, whose sensors record when the records are generated.
type Counters struct {
	// ClassicRebalances are classic rebalances completed: the leader's
	// assignment durable and the group Stable.
	ClassicRebalances int64
	// ConsumerRebalances are consumer groups' epoch bumps.
	ConsumerRebalances int64
	// OffsetCommits, OffsetExpirations and OffsetDeletions count
	// partitions' offsets committed, expired and deleted by OffsetDelete.
	OffsetCommits     int64
	OffsetExpirations int64
	OffsetDeletions   int64
}

// Add adds o to c.
func (c *Counters) Add(o Counters) {
	c.ClassicRebalances += o.ClassicRebalances
	c.ConsumerRebalances += o.ConsumerRebalances
	c.OffsetCommits += o.OffsetCommits
	c.OffsetExpirations += o.OffsetExpirations
	c.OffsetDeletions += o.OffsetDeletions
}

// ConsumerGroupStates are Kafka's ConsumerGroupState names (its toString),
// in its order.
var ConsumerGroupStates = [...]string{cgEmpty, cgAssigning, cgReconciling, cgStable, "Dead"}

// MetricsSnapshot is what a scrape reads of one Manager.
type MetricsSnapshot struct {
	// ClassicGroups counts classic groups by state, indexed by State.
	ClassicGroups [Dead + 1]int
	// ConsumerGroups counts consumer groups by Kafka's state name.
	ConsumerGroups map[string]int
	// Offsets counts committed offsets (Kafka's NumOffsets).
	Offsets  int
	Counters Counters
	// Groups are the groups with committed offsets or members, for lag;
	// nil unless asked for.
	Groups []GroupOffsets
}

// GroupOffsets are a group's member count and committed offsets.
type GroupOffsets struct {
	GroupID string
	Members int
	Offsets []CommittedOffset
}

// CommittedOffset is a partition's committed offset.
type CommittedOffset struct {
	Partition kafka.TopicPartition
	Offset    int64
}

// Counters returns the cumulative counts.
func (m *Manager) Counters() Counters { return m.counters }

// Metrics counts the groups and offsets, and with offsets set copies every
// group's committed offsets: one pass over the groups, in no order.
func (m *Manager) Metrics(offsets bool) MetricsSnapshot {
	s := MetricsSnapshot{ConsumerGroups: make(map[string]int, len(ConsumerGroupStates)), Counters: m.counters}
	for id, g := range m.groups {
		members := len(g.members)
		if g.cg != nil {
			s.ConsumerGroups[g.cg.state()]++
			members = len(g.cg.members)
		} else if g.state >= 0 && g.state <= Dead {
			s.ClassicGroups[g.state]++
		}
		s.Offsets += len(g.offsets)
		if !offsets || (members == 0 && len(g.offsets) == 0) {
			continue
		}
		gl := GroupOffsets{GroupID: id, Members: members, Offsets: make([]CommittedOffset, 0, len(g.offsets))}
		for tp, o := range g.offsets {
			gl.Offsets = append(gl.Offsets, CommittedOffset{Partition: tp, Offset: o.Offset})
		}
		s.Groups = append(s.Groups, gl)
	}
	return s
}
