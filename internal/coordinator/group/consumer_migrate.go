package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group/assignor"
)

// Online migration between the protocols (KIP-848's upgrade path, Kafka's
// group.consumer.migration.policy): a consumer-protocol member joining a
// live classic group turns it into a consumer group whose classic members
// keep working through JoinGroup, SyncGroup and Heartbeat; when the last
// consumer-protocol member leaves, the group turns back into a classic
// group.

func (c *Config) upgradeEnabled() bool {
	return c.ConsumerMigrationPolicy == "upgrade" || c.ConsumerMigrationPolicy == "bidirectional"
}

func (c *Config) downgradeEnabled() bool {
	return c.ConsumerMigrationPolicy == "downgrade" || c.ConsumerMigrationPolicy == "bidirectional"
}

// parsedSubscription is a classic member's ConsumerProtocol subscription.
type parsedSubscription struct {
	version int16
	topics  []string
	owned   map[string][]int32
	rack    *string
}

func parseSubscription(b []byte) (parsedSubscription, bool) {
	var s kmsg.ConsumerMemberMetadata
	if err := s.ReadFrom(b); err != nil {
		return parsedSubscription{}, false
	}
	p := parsedSubscription{version: s.Version, topics: slices.Compact(slices.Sorted(slices.Values(s.Topics))), owned: map[string][]int32{}, rack: s.Rack}
	for _, o := range s.OwnedPartitions {
		p.owned[o.Topic] = append(p.owned[o.Topic], o.Partitions...)
	}
	return p, true
}

// upgradeRefusal is why a live classic group cannot become a consumer group
// (GROUP_ID_NOT_FOUND with Kafka's message), or nil.
func (m *Manager) upgradeRefusal(g *Group) error {
	switch {
	case !m.cfg.upgradeEnabled():
		return hbErr(kerr.GroupIDNotFound.Code, "Cannot upgrade classic group %s to consumer group because online upgrade is disabled.", g.id)
	case !g.usesConsumerProtocol():
		return hbErr(kerr.GroupIDNotFound.Code, "Cannot upgrade classic group %s to consumer group because the group does not use the consumer embedded protocol.", g.id)
	case len(g.members) > m.cfg.ConsumerMaxSize:
		return hbErr(kerr.GroupIDNotFound.Code, "Cannot upgrade classic group %s to consumer group because the group size exceeds the consumer group maximum size.", g.id)
	}
	return nil
}

// usesConsumerProtocol reports whether a classic group's members all speak
// the consumer embedded protocol with subscriptions and assignments the
// broker can read (no assignor user data, which a conversion would lose).
func (g *Group) usesConsumerProtocol() bool {
	if g.protocolType != "consumer" {
		return false
	}
	for _, mem := range g.members {
		if _, ok := parseSubscription(mem.metadataFor(g.protocolName)); !ok {
			return false
		}
		if len(mem.assignment) > 0 {
			var a kmsg.ConsumerMemberAssignment
			if a.ReadFrom(mem.assignment) != nil || len(a.UserData) > 0 {
				return false
			}
		}
	}
	return true
}

// convertToConsumer turns a live classic group into a consumer group at
// its generation: each classic member keeps its assignment as its current
// and target assignment.
func (m *Manager) convertToConsumer(now time.Time, g *Group) {
	topics := m.topics()
	g.failPendingJoins(kerr.RebalanceInProgress.Code)
	g.failPendingSyncs(kerr.RebalanceInProgress.Code)
	gen := g.generation
	var members []*consumerMember
	for _, id := range g.order {
		cm := g.members[id]
		sub, _ := parseSubscription(cm.metadataFor(g.protocolName))
		mem := newConsumerMember(id)
		mem.instanceID, mem.rackID = cm.instanceID, sub.rack
		mem.epoch, mem.prevEpoch, mem.state = gen, gen, memberStable
		mem.clientID, mem.clientHost = cm.clientID, cm.clientHost
		mem.subscribedNames = sub.topics
		mem.rebalanceTimeoutMs = int32(cm.rebalanceTimeout.Milliseconds())
		mem.classic = &classicMemberMetadata{sessionTimeoutMs: int32(cm.sessionTimeout.Milliseconds()), protocols: cloneProtocols(cm.protocols)}
		var a kmsg.ConsumerMemberAssignment
		if len(cm.assignment) > 0 && a.ReadFrom(cm.assignment) == nil {
			for _, t := range a.Topics {
				if ti, ok := topics.ByName(t.Topic); ok {
					for _, p := range t.Partitions {
						putEpoch(mem.assigned, ti.ID, p, gen)
					}
				}
			}
		}
		members = append(members, mem)
	}
	m.cgDo(g, opClassicTombstone{})
	g.pending = make(map[string]time.Time)
	g.joinDeadline, g.syncDeadline, g.initialRebalance = time.Time{}, time.Time{}, false
	g.cg = newConsumerGroup()
	for _, mem := range members {
		m.cgDo(g, opMember{mem})
	}
	m.cgDo(g, opEpoch{epoch: gen, hash: metadataHashOf(g.cg.subscribedTopicNames(), topics)})
	g.cg.topicsVersion = topics.Version()
	for _, mem := range members {
		m.cgDo(g, opTarget{memberID: mem.id, assignment: assignmentOf(mem.assigned)})
	}
	m.cgDo(g, opTargetMeta{epoch: gen, timestamp: now.UnixMilli()})
	for _, mem := range members {
		m.cgDo(g, opCurrent{mem})
	}
}

func assignmentOf(p partitionEpochs) assignor.Assignment {
	a := assignor.Assignment{}
	for _, tp := range p.topicPartitions() {
		a[tp.TopicID] = tp.Partitions
	}
	return a
}

// failPendingJoins answers every waiting JoinGroup with code.
func (g *Group) failPendingJoins(code int16) {
	for _, id := range g.order {
		mem := g.members[id]
		if mem.joinReply != nil {
			r := mem.joinReply
			mem.joinReply = nil
			r(JoinResult{ErrorCode: code, MemberID: mem.id, GenerationID: -1})
		}
	}
}

// shouldDowngrade reports whether removing the leaving members leaves only
// classic members, which then form a classic group again.
func (m *Manager) shouldDowngrade(cg *consumerGroup, leaving string) bool {
	left := 0
	for id, mem := range cg.members {
		if id == leaving {
			continue
		}
		if !mem.usesClassic() {
			return false
		}
		left++
	}
	return left > 0 && cg.members[leaving] != nil && !cg.members[leaving].usesClassic() &&
		m.cfg.downgradeEnabled() && left <= m.cfg.MaxSize
}

// convertToClassic turns a consumer group whose remaining members all speak
// the classic protocol back into a classic group at the group epoch, with
// their current assignments, and starts a rebalance so they rejoin it.
func (m *Manager) convertToClassic(now time.Time, g *Group, leaving string) {
	cg, topics := g.cg, m.topics()
	var keep []*consumerMember
	for _, id := range cg.memberIDs() {
		if id != leaving {
			keep = append(keep, cg.members[id])
		}
	}
	epoch := cg.groupEpoch
	m.cgPending = append(m.cgPending, cg.tombstones(g.id)...)
	g.cg = nil
	g.resetMembership()
	g.protocolType = "consumer"
	g.generation = epoch
	g.protocolName = keep[0].classic.protocols[0].Name
	for _, mem := range keep {
		c := &member{
			id: mem.id, instanceID: mem.instanceID, clientID: mem.clientID, clientHost: mem.clientHost,
			sessionTimeout:   time.Duration(mem.classic.sessionTimeoutMs) * time.Millisecond,
			rebalanceTimeout: time.Duration(mem.rebalanceTimeoutMs) * time.Millisecond,
			protocolType:     "consumer", protocols: cloneProtocols(mem.classic.protocols),
			assignment: classicAssignment(mem, topics), lastHeartbeat: now,
		}
		g.addMember(c, now)
	}
	g.transition(Stable, now)
	m.cgPending = append(m.cgPending, g.metadataRecord(now))
	g.prepareRebalance(now)
}

// classicAssignment serializes a member's current assignment in the
// ConsumerProtocol version of its subscription, for SyncGroup.
func classicAssignment(mem *consumerMember, topics Topics) []byte {
	a := kmsg.ConsumerMemberAssignment{Version: 0}
	if mem.classic != nil && len(mem.classic.protocols) > 0 {
		if sub, ok := parseSubscription(mem.classic.protocols[0].Metadata); ok {
			a.Version = min(sub.version, 3)
		}
	}
	for _, tp := range mem.assigned.topicPartitions() {
		if t, ok := topics.ByID(tp.TopicID); ok {
			a.Topics = append(a.Topics, kmsg.ConsumerMemberAssignmentTopic{Topic: t.Name, Partitions: tp.Partitions})
		}
	}
	slices.SortFunc(a.Topics, func(x, y kmsg.ConsumerMemberAssignmentTopic) int {
		switch {
		case x.Topic < y.Topic:
			return -1
		case x.Topic > y.Topic:
			return 1
		}
		return 0
	})
	return a.AppendTo(nil)
}
