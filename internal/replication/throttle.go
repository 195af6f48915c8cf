package replication

import (
	"slices"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ReplicaQuota is Kafka's ReplicaQuota: a replication throttle, one for
// the leader side (leader.replication.throttled.rate) and one for the
// follower side (follower.replication.throttled.rate). quota's
// ReplicationQuota implements it; the node sets the rate and the throttled
// replica lists as the metadata changes.
type ReplicaQuota interface {
	// AnyThrottled reports whether some partition is throttled; when none
	// is, the fetch paths never consult the quota again.
	AnyThrottled() bool
	// IsThrottled reports whether tp's replica here is in its topic's
	// throttled replica list.
	IsThrottled(tp kafka.TopicPartition) bool
	// IsQuotaExceeded reports whether the throttled traffic's measured
	// rate is above the bound.
	IsQuotaExceeded() bool
	// Record counts bytes of throttled traffic.
	Record(bytes int64)
}

// activeQuota returns q when it throttles some partition, else nil: the
// unthrottled fetch paths pay one call and no more.
func activeQuota(q ReplicaQuota) ReplicaQuota {
	if q == nil || !q.AnyThrottled() {
		return nil
	}
	return q
}

// shouldLeaderThrottle is ReplicaManager.shouldLeaderThrottle: a follower's
// fetch of a throttled partition gets no records while the leader quota is
// exceeded, unless the follower is in the ISR ("to avoid ISR thrashing").
func (p *Partition) shouldLeaderThrottle(q ReplicaQuota, replicaID int32) bool {
	if q == nil || !q.IsThrottled(p.tp) {
		return false
	}
	p.mu.Lock()
	inSync := slices.Contains(p.mu.isr, replicaID)
	p.mu.Unlock()
	return !inSync && q.IsQuotaExceeded()
}

// recordLeaderThrottled counts the bytes of throttled partitions in a
// follower's fetch answer against the leader quota, as KafkaApis records
// sizeOfThrottledPartitions once the answer is built.
func recordLeaderThrottled(q ReplicaQuota, results []FetchPartitionResult) {
	var n int64
	for i := range results {
		if results[i].Err == nil && results[i].Records.Size > 0 && q.IsThrottled(results[i].TP) {
			n += results[i].Records.Size
		}
	}
	if n > 0 {
		q.Record(n)
	}
}

// shouldFollowerThrottle is ReplicaFetcherThread.shouldFollowerThrottle: a
// throttled partition not caught up with its leader's high watermark is
// left out of the fetch while the follower quota is exceeded.
func shouldFollowerThrottle(q ReplicaQuota, pos fetchPosition) bool {
	return q != nil && !pos.inSync && q.IsThrottled(pos.tp) && q.IsQuotaExceeded()
}
