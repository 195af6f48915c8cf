package group

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Record key and value versions, as Kafka writes them so that its
// DumpLogSegments --offsets-decoder reads ours: offset commit keys v1 (v0 is
// the same layout), group metadata keys v2, offset values v3 (v1 when the
// commit carried its own retention), group metadata values v3.
const (
	offsetKeyVersion        int16 = 1
	groupKeyVersion         int16 = 2
	offsetValueVersion      int16 = 3
	offsetValueExpireVer    int16 = 1
	groupMetadataValueVer   int16 = 3
	maxOffsetValueVersion   int16 = 4
	maxGroupMetadataVersion int16 = 4
)

func offsetKey(group string, tp kafka.TopicPartition) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetKeyVersion, Group: group, Topic: tp.Topic, Partition: tp.Partition}
	return k.AppendTo(nil)
}

func groupKey(group string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupKeyVersion, Group: group}
	return k.AppendTo(nil)
}

func offsetRecord(group string, tp kafka.TopicPartition, v OffsetAndMetadata) Record {
	val := kmsg.NewOffsetCommitValue()
	val.Version = offsetValueVersion
	val.Offset = v.Offset
	val.LeaderEpoch = v.LeaderEpoch
	val.Metadata = v.Metadata
	val.CommitTimestamp = v.CommitTime.UnixMilli()
	if !v.ExpireTime.IsZero() {
		val.Version = offsetValueExpireVer
		val.ExpireTimestamp = v.ExpireTime.UnixMilli()
	}
	return Record{Key: offsetKey(group, tp), Value: val.AppendTo(nil)}
}

func offsetTombstone(group string, tp kafka.TopicPartition) Record {
	return Record{Key: offsetKey(group, tp)}
}

func groupTombstone(group string) Record { return Record{Key: groupKey(group)} }

// metadataRecord is the group's metadata with its members' current
// assignments.
func (g *Group) metadataRecord(now time.Time) Record {
	assignments := make(map[string][]byte, len(g.members))
	for id, mem := range g.members {
		assignments[id] = mem.assignment
	}
	return g.metadataRecordWith(now, assignments)
}

func (g *Group) metadataRecordWith(now time.Time, assignments map[string][]byte) Record {
	val := kmsg.NewGroupMetadataValue()
	val.Version = groupMetadataValueVer
	val.ProtocolType = g.protocolType
	val.Generation = g.generation
	val.Protocol = optString(g.protocolName)
	val.Leader = optString(g.leader)
	val.CurrentStateTimestamp = now.UnixMilli()
	for _, id := range g.order {
		mem := g.members[id]
		vm := kmsg.NewGroupMetadataValueMember()
		vm.MemberID = mem.id
		vm.InstanceID = mem.instanceID
		vm.ClientID = mem.clientID
		vm.ClientHost = mem.clientHost
		vm.RebalanceTimeoutMillis = int32(mem.rebalanceTimeout.Milliseconds())
		vm.SessionTimeoutMillis = int32(mem.sessionTimeout.Milliseconds())
		vm.Subscription = mem.metadataFor(g.protocolName)
		vm.Assignment = assignments[id]
		if vm.Assignment == nil {
			vm.Assignment = []byte{}
		}
		if vm.Subscription == nil {
			vm.Subscription = []byte{}
		}
		val.Members = append(val.Members, vm)
	}
	return Record{Key: groupKey(g.id), Value: val.AppendTo(nil)}
}

// Replay applies one record read back from the partition (start-up load)
// at offset. txnProducer is the producer of the transactional batch the
// record came from, kafka.NoProducerID for a plain batch: a transaction's
// offsets wait as pending for its marker (CompleteTransaction). Records
// that are not ours (other key versions, such as Kafka's consumer group
// records) are skipped; a record of ours that does not decode is an error.
func (m *Manager) Replay(now time.Time, offset, txnProducer int64, key, value []byte) error {
	m.nextOrder = max(m.nextOrder, offset+1)
	if len(key) < 2 {
		return fmt.Errorf("offsets record key of %d bytes", len(key))
	}
	switch version := int16(binary.BigEndian.Uint16(key)); version {
	case 0, 1:
		var k kmsg.OffsetCommitKey
		if err := k.ReadFrom(key); err != nil {
			return fmt.Errorf("decoding offset commit key: %w", err)
		}
		return m.replayOffset(now, offset, txnProducer, k, value)
	case 2:
		var k kmsg.GroupMetadataKey
		if err := k.ReadFrom(key); err != nil {
			return fmt.Errorf("decoding group metadata key: %w", err)
		}
		return m.replayGroup(now, k.Group, value)
	case 3, 4, 5, 6, 7, 8, 16:
		return m.replayConsumer(now, key, value)
	case 10, 11, 12, 13, 14, 15:
		return m.replayShare(now, key, value)
	default:
		return nil
	}
}

func (m *Manager) replayOffset(now time.Time, offset, txnProducer int64, k kmsg.OffsetCommitKey, value []byte) error {
	tp := kafka.TopicPartition{Topic: k.Topic, Partition: k.Partition}
	g, ok := m.groups[k.Group]
	if value == nil {
		// A tombstone removes the offset, committed or pending (Kafka's
		// replay).
		m.txn.dropPartition(k.Group, tp)
		if ok {
			delete(g.offsets, tp)
			m.dropIfForgotten(g)
		}
		return nil
	}
	if len(value) < 2 || int16(binary.BigEndian.Uint16(value)) > maxOffsetValueVersion {
		return fmt.Errorf("offset commit value of group %q: unknown version", k.Group)
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(value); err != nil {
		return fmt.Errorf("decoding offset commit value of group %q: %w", k.Group, err)
	}
	g = m.groupOrCreate(k.Group, now)
	o := OffsetAndMetadata{Offset: v.Offset, LeaderEpoch: kafka.NoEpoch, Metadata: v.Metadata, CommitTime: time.UnixMilli(v.CommitTimestamp), order: offset}
	if v.Version >= 3 {
		o.LeaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 && v.ExpireTimestamp >= 0 {
		o.ExpireTime = time.UnixMilli(v.ExpireTimestamp)
	}
	if txnProducer != kafka.NoProducerID {
		m.txn.put(txnProducer, k.Group, tp, o)
		return nil
	}
	g.offsets[tp] = o
	return nil
}

func (m *Manager) replayGroup(now time.Time, id string, value []byte) error {
	g, ok := m.groups[id]
	if value == nil {
		if ok {
			g.resetMembership()
			m.dropIfForgotten(g)
		}
		return nil
	}
	if len(value) < 2 || int16(binary.BigEndian.Uint16(value)) > maxGroupMetadataVersion {
		return fmt.Errorf("group metadata value of group %q: unknown version", id)
	}
	var v kmsg.GroupMetadataValue
	if err := v.ReadFrom(value); err != nil {
		return fmt.Errorf("decoding group metadata value of group %q: %w", id, err)
	}
	if !ok {
		g = newGroup(m, id, now)
		m.groups[id] = g
	}
	g.resetMembership()
	g.cg = nil // a classic group's record replaces a consumer group
	g.protocolType = v.ProtocolType
	g.generation = v.Generation
	if v.Protocol != nil {
		g.protocolName = *v.Protocol
	}
	if v.Leader != nil {
		g.leader = *v.Leader
	}
	if v.Version >= 2 && v.CurrentStateTimestamp > 0 {
		g.stateSince = time.UnixMilli(v.CurrentStateTimestamp)
	}
	for _, vm := range v.Members {
		mem := &member{
			id: vm.MemberID, instanceID: vm.InstanceID, clientID: vm.ClientID, clientHost: vm.ClientHost,
			sessionTimeout:   time.Duration(vm.SessionTimeoutMillis) * time.Millisecond,
			rebalanceTimeout: time.Duration(vm.RebalanceTimeoutMillis) * time.Millisecond,
			protocolType:     v.ProtocolType,
			protocols:        []Protocol{{Name: g.protocolName, Metadata: slices.Clone(vm.Subscription)}},
			assignment:       slices.Clone(vm.Assignment),
			lastHeartbeat:    now,
		}
		if v.Version == 0 {
			mem.rebalanceTimeout = mem.sessionTimeout
		}
		g.members[mem.id] = mem
		g.order = append(g.order, mem.id)
		if mem.instanceID != nil {
			g.static[*mem.instanceID] = mem.id
		}
	}
	if len(g.members) > 0 {
		g.state = Stable
	} else {
		g.state = Empty
	}
	return nil
}

// resetMembership forgets members and generation (a replayed group record
// replaces the previous one whole).
func (g *Group) resetMembership() {
	g.members = make(map[string]*member)
	g.order = nil
	g.static = make(map[string]string)
	g.pendingSync = make(map[string]bool)
	g.leader, g.protocolName, g.protocolType = "", "", ""
	g.generation = 0
	g.state = Empty
}

func (m *Manager) dropIfForgotten(g *Group) {
	if g.cg == nil && len(g.members) == 0 && len(g.offsets) == 0 && g.generation == 0 && !m.txn.open(g.id) {
		delete(m.groups, g.id)
	}
}

// FinishLoad ends the replay: loaded members get a fresh session, and a
// group that has grown past group.max.size rebalances to shed members, as
// Kafka does.
func (m *Manager) FinishLoad(now time.Time) {
	m.lastExpiry = now
	m.shareFinishLoad(now)
	for _, id := range m.GroupIDs() {
		g := m.groups[id]
		if g.cg != nil {
			session, _ := m.cfg.consumerTimeouts(id)
			g.cg.startTimers(now, session)
			continue
		}
		for _, mem := range g.members {
			mem.lastHeartbeat = now
		}
		if g.state == Stable && len(g.members) > m.cfg.MaxSize {
			g.prepareRebalance(now)
		}
	}
}
