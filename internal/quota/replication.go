package quota

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

// ReplicationKind names one side of replication throttling, as Kafka's
// QuotaType: its metric group (kafka.server:type=LeaderReplication...).
type ReplicationKind int

const (
	// LeaderReplication is the leader's quota on bytes sent to throttled
	// followers (leader.replication.throttled.rate).
	LeaderReplication ReplicationKind = iota
	// FollowerReplication is the follower's quota on bytes fetched for
	// throttled partitions (follower.replication.throttled.rate).
	FollowerReplication
)

func (k ReplicationKind) String() string {
	if k == LeaderReplication {
		return "LeaderReplication"
	}
	return "FollowerReplication"
}

// Unlimited is Kafka's QUOTA_BYTES_PER_SECOND_DEFAULT (Long.MAX_VALUE):
// the rate of a broker with no throttle set.
const Unlimited = math.MaxInt64

// SimpleRateWindowMs is SimpleRate.windowSize, the replication quotas'
// measure: the time since the oldest retained sample began, at least one
// window. Unlike Rate it does not pad a young sensor to Samples-1 windows,
// so a throttle bites from the first second of a move.
func (r *Rate) SimpleRateWindowMs(cfg Config, nowMs int64) int64 {
	cfg = cfg.valid()
	r.purge(cfg, nowMs)
	oldest := r.currentSample(nowMs).startTimeMs
	for _, s := range r.samples {
		oldest = min(oldest, s.startTimeMs)
	}
	return max(nowMs-oldest, cfg.WindowMs)
}

// MeasureSimple is SimpleRate.measure: the retained sum per second over
// SimpleRateWindowMs.
func (r *Rate) MeasureSimple(cfg Config, nowMs int64) float64 {
	cfg = cfg.valid()
	w := r.SimpleRateWindowMs(cfg, nowMs)
	var sum float64
	for _, s := range r.samples {
		sum += s.value
	}
	return sum / (float64(w) / 1000)
}

// throttledTopic is one topic's throttled replicas on this broker: all of
// them ("*"), or the partitions listed for this broker.
type throttledTopic struct {
	all        bool
	partitions map[int32]struct{}
}

// ReplicationQuota is Kafka's ReplicationQuotaManager for one side: the
// byte rate of throttled partitions' replication traffic against the
// bound (leader./follower.replication.throttled.rate), over
// replication.quota.window.num windows of
// replication.quota.window.size.seconds, measured as SimpleRate; and the
// throttled partitions, from the topics' throttled replica lists. Safe for
// concurrent use; IsThrottled takes no lock.
type ReplicationQuota struct {
	kind ReplicationKind
	cfg  Config
	clk  clock.Clock

	// bound is the rate in bytes per second; Unlimited when unset.
	bound atomic.Int64
	// throttled maps topic to its throttled replicas here. Invariant:
	// replaced whole (copy on write), never mutated once stored.
	throttled atomic.Pointer[map[string]throttledTopic]

	mu   sync.Mutex
	rate Rate
}

// NewReplicationQuota returns an unlimited quota with nothing throttled.
func NewReplicationQuota(kind ReplicationKind, cfg Config, clk clock.Clock) *ReplicationQuota {
	if clk == nil {
		clk = clock.Real{}
	}
	q := &ReplicationQuota{kind: kind, cfg: cfg.valid(), clk: clk}
	q.bound.Store(Unlimited)
	empty := map[string]throttledTopic{}
	q.throttled.Store(&empty)
	return q
}

// Kind is the side this quota throttles.
func (q *ReplicationQuota) Kind() ReplicationKind { return q.kind }

// UpdateQuota sets the bound (updateQuota); a value <= 0 is taken as 0,
// which stops throttled traffic, as Kafka's bound of 0 does.
func (q *ReplicationQuota) UpdateQuota(bytesPerSecond int64) {
	q.bound.Store(max(bytesPerSecond, 0))
}

// UpperBound is the bound in bytes per second (Unlimited when unset).
func (q *ReplicationQuota) UpperBound() int64 { return q.bound.Load() }

// SetThrottled replaces the throttled partitions: topic to its list as
// ParseThrottledReplicas returned it (all, or the partitions named).
// Topics absent are not throttled (markThrottled/removeThrottle).
func (q *ReplicationQuota) SetThrottled(topics map[string]ThrottledReplicas) {
	m := make(map[string]throttledTopic, len(topics))
	for topic, t := range topics {
		if !t.All && len(t.Partitions) == 0 {
			continue
		}
		tt := throttledTopic{all: t.All}
		if !t.All {
			tt.partitions = make(map[int32]struct{}, len(t.Partitions))
			for _, p := range t.Partitions {
				tt.partitions[p] = struct{}{}
			}
		}
		m[topic] = tt
	}
	q.throttled.Store(&m)
}

// AnyThrottled reports whether some partition is throttled: when none is,
// the fetch paths skip the quota altogether.
func (q *ReplicationQuota) AnyThrottled() bool { return len(*q.throttled.Load()) > 0 }

// IsThrottled is isThrottled: whether tp's replica here is in its topic's
// throttled replica list.
func (q *ReplicationQuota) IsThrottled(tp kafka.TopicPartition) bool {
	m := *q.throttled.Load()
	if len(m) == 0 {
		return false
	}
	t, ok := m[tp.Topic]
	if !ok {
		return false
	}
	if t.all {
		return true
	}
	_, ok = t.partitions[tp.Partition]
	return ok
}

// IsQuotaExceeded is isQuotaExceeded: the measured rate is above the bound
// (Sensor.checkQuotas with an upper-bound Quota).
func (q *ReplicationQuota) IsQuotaExceeded() bool {
	bound := q.bound.Load()
	if bound == Unlimited {
		return false
	}
	return q.Rate() > float64(bound)
}

// Record adds bytes of throttled traffic.
func (q *ReplicationQuota) Record(bytes int64) {
	now := q.clk.Now().UnixMilli()
	q.mu.Lock()
	q.rate.Record(q.cfg, float64(bytes), now)
	q.mu.Unlock()
}

// Rate is the measured byte rate (the byte-rate metric).
func (q *ReplicationQuota) Rate() float64 {
	now := q.clk.Now().UnixMilli()
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.rate.MeasureSimple(q.cfg, now)
}

// ThrottledReplicas is one topic's throttled replica list as it applies to
// one broker.
type ThrottledReplicas struct {
	// All is "*": every replica of the topic.
	All bool
	// Partitions are the partitions listed with this broker's id.
	Partitions []int32
}

// ParseThrottledReplicas reads a topic's leader. or
// follower.replication.throttled.replicas for broker (Kafka's
// parseThrottledPartitions): "" is none, "*" all, otherwise the
// partitions of the "partition:broker" entries naming broker. Entries
// that do not parse are skipped (the controller validated the list).
func ParseThrottledReplicas(value string, broker int32) ThrottledReplicas {
	value = strings.TrimSpace(value)
	switch value {
	case "":
		return ThrottledReplicas{}
	case "*":
		return ThrottledReplicas{All: true}
	}
	var out ThrottledReplicas
	for _, entry := range strings.Split(value, ",") {
		part, b, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok {
			continue
		}
		p, err1 := strconv.ParseUint(strings.TrimSpace(part), 10, 31)
		id, err2 := strconv.ParseUint(strings.TrimSpace(b), 10, 31)
		if err1 != nil || err2 != nil || int64(id) != int64(broker) {
			continue
		}
		out.Partitions = append(out.Partitions, int32(p))
	}
	return out
}
