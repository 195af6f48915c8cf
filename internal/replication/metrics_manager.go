package replication

import (
	"sync/atomic"
)

// managerMetrics are the replica manager's counters: the BrokerTopicMetrics
// and the ReplicaManager's ISR change meters (Kafka's IsrShrinksPerSec,
// IsrExpandsPerSec, FailedIsrUpdatesPerSec, kept as counts).
type managerMetrics struct {
	topics           *BrokerTopicStats
	isrShrinks       atomic.Int64
	isrExpands       atomic.Int64
	failedISRUpdates atomic.Int64
	// off leaves newly hosted partitions without metrics (DisableMetrics).
	off bool
}

func newManagerMetrics() *managerMetrics {
	return &managerMetrics{topics: newBrokerTopicStats()}
}

// hosted is a newly hosted partition's metrics (its topic's stats held
// until the partition goes: BrokerTopicStats.release).
func (m *managerMetrics) hosted(topic string) *partitionMetrics {
	if m.off {
		return nil // the hot paths skip a nil partitionMetrics
	}
	return &partitionMetrics{broker: m.topics, topic: m.topics.acquire(topic)}
}

// followerFetched counts a follower's fetched bytes (ReplicationBytesIn,
// the whole answer as Kafka counts it, aggregate only) and its lag behind
// the leader's high watermark after the append.
func (m *managerMetrics) followerFetched(p *Partition, n int, leaderHW int64) {
	m.topics.ReplicationBytesIn.Add(int64(n))
	p.metrics.setFetcherLag(leaderHW - p.log.LogEndOffset())
}

// isrChangeAnswered counts the controller's answer to an ISR change as
// Kafka's AlterPartition handling does: a failure, or an expansion or
// shrink once committed (a new partition epoch; the same epoch means the
// controller changed nothing).
func (m *managerMetrics) isrChangeAnswered(item isrChangeItem, partitionEpoch int32, err error) {
	switch {
	case err != nil:
		m.failedISRUpdates.Add(1)
	case partitionEpoch == item.change.PartitionEpoch:
	case item.expand:
		m.isrExpands.Add(1)
	default:
		m.isrShrinks.Add(1)
	}
}

// DisableMetrics leaves the partitions hosted from now on uncounted, for
// benchmarks that compare the produce and fetch paths with and without
// the BrokerTopicMetrics (no configuration reaches it). Call it before
// the first partition is hosted.
func (rm *ReplicaManager) DisableMetrics() { rm.metrics.off = true }

// BrokerTopicStats returns the broker's BrokerTopicMetrics counters.
func (rm *ReplicaManager) BrokerTopicStats() *BrokerTopicStats { return rm.metrics.topics }

// ISRChangeCounts returns how many ISR shrinks and expansions the
// controller committed and how many ISR changes failed.
func (rm *ReplicaManager) ISRChangeCounts() (shrinks, expands, failed int64) {
	m := rm.metrics
	return m.isrShrinks.Load(), m.isrExpands.Load(), m.failedISRUpdates.Load()
}

// isrSize is the size of the partition's current ISR.
func (p *Partition) isrSize() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.isr)
}

// ReplicaCounts are the ReplicaManager's state gauges, computed from the
// hosted partitions.
type ReplicaCounts struct {
	// Partitions counts hosted partitions, those that failed to load too.
	Partitions, Leaders, UnderReplicated, UnderMinISR, AtMinISR int
	// Offline counts partitions whose log failed to load or whose log
	// dir went offline.
	Offline int
	// MaxFetcherLag is the largest lag, in offsets, of a partition this
	// broker follows behind its leader's high watermark.
	MaxFetcherLag int64
}

// ReplicaCounts walks the hosted partitions, locking each briefly in turn
// (never all at once, so appends go on during a scrape).
func (rm *ReplicaManager) ReplicaCounts() ReplicaCounts {
	rm.mu.RLock()
	parts := make([]*Partition, 0, len(rm.mu.partitions))
	for _, p := range rm.mu.partitions {
		parts = append(parts, p)
	}
	c := ReplicaCounts{Offline: len(rm.mu.failed), Partitions: len(rm.mu.failed)}
	rm.mu.RUnlock()
	c.Partitions += len(parts)
	for _, p := range parts {
		p.countInto(&c)
	}
	return c
}

// countInto adds the partition to c, as Kafka's Partition gauges decide:
// under-replicated is a leader whose ISR is smaller than its replicas,
// the min ISR compared with min.insync.replicas capped at the replicas.
func (p *Partition) countInto(c *ReplicaCounts) {
	if p.log.Offline() {
		c.Offline++
	}
	minISR := p.settings.Load().Data.MinInsyncReplicas
	p.mu.Lock()
	role, replicas, isr := p.mu.role, len(p.mu.replicas), len(p.mu.isr)
	p.mu.Unlock()
	switch role {
	case RoleLeader:
		c.Leaders++
		if isr < replicas {
			c.UnderReplicated++
		}
		effective := min(minISR, replicas)
		if isr < effective {
			c.UnderMinISR++
		}
		if isr == effective {
			c.AtMinISR++
		}
	case RoleFollower:
		if p.metrics != nil {
			c.MaxFetcherLag = max(c.MaxFetcherLag, p.metrics.fetcherLag.Load())
		}
	}
}
