package quota

import (
	"fmt"
)

// ThrottlingError is Kafka's ThrottlingQuotaExceededException: a strict
// controller mutation quota refused a topic's partitions.
type ThrottlingError struct {
	ThrottleTimeMs int64
}

func (e *ThrottlingError) Error() string {
	return fmt.Sprintf("The throttling quota has been exceeded. (throttle time %d ms)", e.ThrottleTimeMs)
}

// Message is Kafka's Errors.THROTTLING_QUOTA_EXCEEDED message, which the
// controller puts in the topic's answer.
const Message = "The throttling quota has been exceeded."

// MutationQuota is one request's ControllerMutationQuota (KIP-599): strict
// (CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+) refuses a
// topic once the bucket is empty; permissive (older versions) accepts every
// topic and only throttles. Used by one request at a time.
type MutationQuota struct {
	m       *Manager
	user    string
	client  string
	strict  bool
	enabled bool

	lastThrottleMs int64
	lastRecordedMs int64
}

// NewMutationQuota is newQuotaFor: strict when the request's version is at
// least the API's first strict version. With no controller mutation quota
// in force the quota is unbounded.
func (m *Manager) NewMutationQuota(user, clientID string, strict bool) *MutationQuota {
	return &MutationQuota{m: m, user: user, client: clientID, strict: strict, enabled: m.Enabled()}
}

// Record takes permits (partitions created or deleted). A strict quota
// whose bucket is already negative refuses them with a *ThrottlingError
// and records nothing; a permissive one records them and only remembers
// the throttle time.
func (q *MutationQuota) Record(permits float64) error {
	if !q.enabled {
		return nil
	}
	m := q.m
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nowMs()
	tags, bound, limited := m.Table().Resolve(q.user, q.client)
	s := m.sensorLocked(tags, now)
	if !limited {
		s.rate.Record(m.cfg, permits, now)
		return nil
	}
	if q.strict {
		if tokens := s.bucket.Measure(m.cfg, bound, now); tokens < 0 {
			q.lastThrottleMs, q.lastRecordedMs = MutationThrottleTime(tokens, bound), now
			return &ThrottlingError{ThrottleTimeMs: q.lastThrottleMs}
		}
	}
	s.bucket.Record(m.cfg, bound, permits, now)
	s.rate.Record(m.cfg, permits, now)
	if !q.strict {
		if tokens := s.bucket.Measure(m.cfg, bound, now); tokens < 0 {
			q.lastThrottleMs, q.lastRecordedMs = MutationThrottleTime(tokens, bound), now
		}
	}
	return nil
}

// Refund gives permits back, for a topic the controller then refused
// (Kafka records a topic's partitions only once its checks passed).
func (q *MutationQuota) Refund(permits float64) {
	if !q.enabled || permits <= 0 {
		return
	}
	m := q.m
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nowMs()
	tags, bound, limited := m.Table().Resolve(q.user, q.client)
	s := m.sensorLocked(tags, now)
	s.rate.Record(m.cfg, -permits, now)
	if limited {
		s.bucket.Record(m.cfg, bound, -permits, now)
	}
}

// ThrottleTimeMs is the throttle time the request's answer carries: the
// last violation's, less the time since it was found.
func (q *MutationQuota) ThrottleTimeMs() int64 {
	if q.lastThrottleMs == 0 {
		return 0
	}
	return max(0, q.lastThrottleMs-(q.m.nowMs()-q.lastRecordedMs))
}

// Exceeded reports whether a strict quota refused a topic (isExceeded).
func (q *MutationQuota) Exceeded() bool { return q.strict && q.lastThrottleMs > 0 }
