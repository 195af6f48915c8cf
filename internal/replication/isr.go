package replication

import (
	"context"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ISRChange is a leader's request to the active controller to set a
// partition's ISR (AlterPartition, key 56). LeaderEpoch and PartitionEpoch
// are the leader's view: the controller refuses the change when either is
// stale, so a leader deposed or overtaken meanwhile cannot undo newer state.
type ISRChange struct {
	TP             kafka.TopicPartition
	TopicID        kafka.UUID
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []int32
	// BrokerEpochs are the NewISR members' broker epochs as their last
	// fetches gave them (KIP-903), -1 where unknown; the controller adds a
	// member only if its epoch is the registered one, so a follower that
	// restarted since (and may have lost what it had) is not taken on an
	// old fetch's word.
	BrokerEpochs []int64
}

// brokerEpoch is member id's epoch in the change, or -1.
func (c ISRChange) brokerEpoch(id int32) int64 {
	for i, m := range c.NewISR {
		if m == id && i < len(c.BrokerEpochs) {
			return c.BrokerEpochs[i]
		}
	}
	return -1
}

// AlterPartitionSender delivers ISR changes to the active controller. It
// returns the partition epoch the controller answered with (the new one
// when the change committed, the current one when there was nothing to
// change); an error means the change may not have happened and the leader
// tries again later from its then-current state.
type AlterPartitionSender interface {
	AlterPartition(ctx context.Context, change ISRChange) (partitionEpoch int32, err error)
}

// AlterPartitionRequest builds the Kafka request (v3, with the members'
// broker epochs) of one change, for a sender that speaks the protocol.
func (c ISRChange) AlterPartitionRequest(brokerID int32, brokerEpoch int64) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version, req.BrokerID, req.BrokerEpoch = 3, brokerID, brokerEpoch
	rt := kmsg.NewAlterPartitionRequestTopic()
	rt.Topic, rt.TopicID = c.TP.Topic, c.TopicID
	rp := kmsg.NewAlterPartitionRequestTopicPartition()
	rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = c.TP.Partition, c.LeaderEpoch, c.PartitionEpoch
	for _, id := range c.NewISR {
		m := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
		m.BrokerID, m.BrokerEpoch = id, c.brokerEpoch(id)
		rp.NewEpochISR = append(rp.NewEpochISR, m)
	}
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}

// AlterPartitionOutcome reads a controller's answer to AlterPartitionRequest:
// the partition epoch, or the error (a *kerr.Error inside) it carries.
func AlterPartitionOutcome(resp *kmsg.AlterPartitionResponse) (int32, error) {
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return 0, fmt.Errorf("alter partition: %w", err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return 0, fmt.Errorf("alter partition: response holds %d topics, want one partition", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return 0, fmt.Errorf("alter partition %d: %w", p.Partition, err)
	}
	return p.PartitionEpoch, nil
}

// UpdateFollowerFetchState records a follower's fetch position (its log end
// offset) and broker epoch (-1 unknown), and advances the high watermark
// when the ISR allows; it reports
// whether the watermark moved, and an ISR expansion to send when the
// follower, outside the ISR, has caught up. A replica that is not assigned
// is NOT_LEADER_OR_FOLLOWER.
func (p *Partition) UpdateFollowerFetchState(replicaID int32, brokerEpoch int64, fetchOffset int64) (bool, *ISRChange, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, ok := p.mu.followers[replicaID]
	if !ok || p.mu.role != RoleLeader {
		return false, nil, fmt.Errorf("partition %s: replica %d is not a follower of this leader: %w", p.tp, replicaID, kerr.NotLeaderForPartition)
	}
	now := p.clk.Now().UnixMilli()
	leo := p.log.LogEndOffset()
	switch {
	case fetchOffset >= leo:
		f.lastCaughtUpMs = now
	case f.lastFetchLeaderLogEndOffset >= 0 && fetchOffset >= f.lastFetchLeaderLogEndOffset:
		f.lastCaughtUpMs = max(f.lastCaughtUpMs, f.lastFetchMs)
	}
	f.logEndOffset, f.brokerEpoch = fetchOffset, brokerEpoch
	f.lastFetchLeaderLogEndOffset, f.lastFetchMs = leo, now
	moved := p.maybeIncrementHighWatermarkLocked()
	return moved, p.expansionLocked(replicaID, f), nil
}

// expansionLocked returns the ISR change that adds a caught-up follower:
// one holding everything up to the high watermark and to the start of this
// leader's epoch (Kafka's isFollowerInSync), when no change is in flight.
func (p *Partition) expansionLocked(id int32, f *followerState) *ISRChange {
	if p.mu.pendingISR != nil || slices.Contains(p.mu.isr, id) {
		return nil
	}
	if f.logEndOffset < p.mu.highWatermark || f.logEndOffset < p.mu.leaderEpochStartOffset {
		return nil
	}
	return p.proposeLocked(append(slices.Clone(p.mu.isr), id))
}

// shrinkIfLagging returns the ISR change that drops the followers not caught
// up within lagMaxMs (replica.lag.time.max.ms), when no change is in flight.
func (p *Partition) shrinkIfLagging(lagMaxMs int64) *ISRChange {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != RoleLeader || p.mu.pendingISR != nil {
		return nil
	}
	now := p.clk.Now().UnixMilli()
	var keep []int32
	for _, id := range p.mu.isr {
		if f, ok := p.mu.followers[id]; ok && now-f.lastCaughtUpMs > lagMaxMs {
			p.logger.Info("follower out of sync; shrinking ISR", "replica", id,
				"lag_ms", now-f.lastCaughtUpMs, "follower_log_end_offset", f.logEndOffset, "log_end_offset", p.log.LogEndOffset())
			continue
		}
		keep = append(keep, id)
	}
	if len(keep) == len(p.mu.isr) {
		return nil
	}
	return p.proposeLocked(keep)
}

// proposeLocked marks newISR as in flight and returns its change.
func (p *Partition) proposeLocked(newISR []int32) *ISRChange {
	p.mu.pendingISR = newISR
	epochs := make([]int64, len(newISR))
	for i, id := range newISR {
		epochs[i] = -1
		if f, ok := p.mu.followers[id]; ok {
			epochs[i] = f.brokerEpoch
		}
	}
	return &ISRChange{TP: p.tp, TopicID: p.topicID, LeaderEpoch: p.mu.leaderEpoch,
		PartitionEpoch: p.mu.partitionEpoch, NewISR: slices.Clone(newISR), BrokerEpochs: epochs}
}

// isrChangeDone settles a change the controller answered: on an error, or
// when nothing changed, the in-flight mark is lifted so the leader decides
// again; a committed change is settled by its metadata (applyState).
func (p *Partition) isrChangeDone(change ISRChange, partitionEpoch int32, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.leaderEpoch != change.LeaderEpoch || p.mu.partitionEpoch != change.PartitionEpoch {
		return
	}
	if err != nil || partitionEpoch == change.PartitionEpoch {
		p.mu.pendingISR = nil
	}
}
