package quota

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/metadata"
)

// inactiveSensorExpiryMs is Kafka's InactiveSensorExpirationTimeSeconds: a
// sensor not recorded for an hour is dropped (and its metrics with it).
const inactiveSensorExpiryMs = 3600 * 1000

// sweepIntervalMs is how often a recording looks for expired sensors.
const sweepIntervalMs = 60 * 1000

// sensor is one quota sensor (Kafka's ClientSensors): the rate, or for the
// controller mutation quota the token bucket beside the rate, and the
// throttle times it caused.
type sensor struct {
	rate           Rate
	bucket         TokenBucket
	throttles      int64
	throttleTimeMs int64
	lastUsedMs     int64
}

// Manager is one kind's ClientQuotaManager: sensors by tags, the quotas
// read from the latest metadata image. Safe for concurrent use.
type Manager struct {
	kind   Kind
	cfg    Config
	clock  clock.Clock
	images func() *metadata.Image
	// maxThrottleMs bounds throttle times (the request quota's one
	// window); zero is unbounded.
	maxThrottleMs int64

	// current is the quota table and the image it was read from, so a
	// request finds no quota without taking mu.
	current atomic.Pointer[imageTable]

	mu        sync.Mutex
	sensors   map[Tags]*sensor
	lastSweep int64
}

type imageTable struct {
	img   *metadata.Image
	table *Table
}

func newManager(kind Kind, cfg Config, clk clock.Clock, images func() *metadata.Image) *Manager {
	m := &Manager{kind: kind, cfg: cfg.valid(), clock: clk, images: images, sensors: map[Tags]*sensor{}}
	if kind == Request {
		m.maxThrottleMs = m.cfg.WindowMs
	}
	return m
}

func (m *Manager) nowMs() int64 { return m.clock.Now().UnixMilli() }

// Table returns the quotas in force: the latest image's, read again when
// the image changed (two callers racing both build the same table).
func (m *Manager) Table() *Table {
	var img *metadata.Image
	if m.images != nil {
		img = m.images()
	}
	if cur := m.current.Load(); cur != nil && cur.img == img {
		return cur.table
	}
	t := NewTable(img, m.kind)
	m.current.Store(&imageTable{img: img, table: t})
	return t
}

// Enabled is quotasEnabled: whether any quota of the kind exists.
func (m *Manager) Enabled() bool { return m.Table().Enabled() }

// sensorLocked returns the sensor of tags, creating it; m.mu is held.
func (m *Manager) sensorLocked(tags Tags, now int64) *sensor {
	if now-m.lastSweep >= sweepIntervalMs {
		m.lastSweep = now
		for t, s := range m.sensors {
			if now-s.lastUsedMs >= inactiveSensorExpiryMs {
				delete(m.sensors, t)
			}
		}
	}
	s, ok := m.sensors[tags]
	if !ok {
		s = &sensor{}
		m.sensors[tags] = s
	}
	s.lastUsedMs = now
	return s
}

// RecordAndGetThrottleTimeMs is maybeRecordAndGetThrottleTimeMs: with any
// quota of the kind in force it records value on the sensor the user and
// client id resolve to and returns the throttle time the violation calls
// for (0 within the quota). Without any quota nothing is recorded.
func (m *Manager) RecordAndGetThrottleTimeMs(user, clientID string, value float64) int64 {
	t := m.Table()
	if !t.Enabled() {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nowMs()
	tags, bound, limited := t.Resolve(user, clientID)
	s := m.sensorLocked(tags, now)
	s.rate.Record(m.cfg, value, now)
	if !limited {
		return 0
	}
	observed := s.rate.Measure(m.cfg, now)
	if observed <= bound {
		return 0
	}
	ms := ThrottleTime(observed, bound, s.rate.WindowSize(m.cfg, now))
	if m.maxThrottleMs > 0 {
		ms = min(ms, m.maxThrottleMs)
	}
	return max(ms, 0)
}

// Unrecord takes value back off the sensor, as unrecordQuotaSensor does for
// a fetch answered empty because it was throttled.
func (m *Manager) Unrecord(user, clientID string, value float64) {
	t := m.Table()
	if !t.Enabled() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nowMs()
	m.sensorLocked(t.Tags(user, clientID), now).rate.Record(m.cfg, -value, now)
}

// MaxValueInQuotaWindow is getMaxValueInQuotaWindow: the most the quota
// allows over Samples-1 windows (a fetch's bytes are capped by it), +Inf
// without a quota.
func (m *Manager) MaxValueInQuotaWindow(user, clientID string) float64 {
	t := m.Table()
	if !t.Enabled() {
		return math.Inf(1)
	}
	_, bound, ok := t.Resolve(user, clientID)
	if !ok {
		return math.Inf(1)
	}
	return bound * float64(m.cfg.Samples-1) * float64(m.cfg.WindowMs) / 1000
}

// Throttled counts a throttle of ms imposed on the sensor's client (the
// throttle-time metric), as ClientQuotaManager.throttle records it.
func (m *Manager) Throttled(user, clientID string, ms int64) {
	if ms <= 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nowMs()
	s := m.sensorLocked(m.Table().Tags(user, clientID), now)
	s.throttles++
	s.throttleTimeMs += ms
}
