package quota

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics exports the live sensors under Kafka's names with the sluice_
// prefix: the measured rate of each sensor (byte-rate of the Produce and
// Fetch quotas, request-time of the Request quota, mutation-rate and tokens
// of the ControllerMutation quota) and the throttles it caused
// (throttle-time, as a total and a count). Labels are Kafka's tags:
// quota_type, user, client_id. A sensor dropped after an hour unused
// drops its series.
type Metrics struct {
	m *Managers

	rate, tokens            *prometheus.Desc
	throttleMs, throttleCnt *prometheus.Desc
}

var labels = []string{"quota_type", "user", "client_id"}

// Register adds the quota metrics to reg.
func (m *Managers) Register(reg prometheus.Registerer) error {
	return reg.Register(&Metrics{
		m: m,
		rate: prometheus.NewDesc("sluice_quota_rate",
			"Measured rate of a quota sensor per user/client-id over the quota window: bytes per second (Produce, Fetch: Kafka's byte-rate), percent of a thread (Request: request-time), partitions per second (ControllerMutation: mutation-rate).", labels, nil),
		tokens: prometheus.NewDesc("sluice_quota_tokens",
			"Tokens left in the controller mutation token bucket per user/client-id (Kafka's tokens).", labels, nil),
		throttleMs: prometheus.NewDesc("sluice_quota_throttle_time_ms_total",
			"Throttle time imposed per user/client-id, in milliseconds (Kafka's throttle-time is its average: divide by sluice_quota_throttles_total).", labels, nil),
		throttleCnt: prometheus.NewDesc("sluice_quota_throttles_total",
			"Responses throttled per user/client-id.", labels, nil),
	})
}

// Describe implements prometheus.Collector.
func (c *Metrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rate
	ch <- c.tokens
	ch <- c.throttleMs
	ch <- c.throttleCnt
}

// Collect implements prometheus.Collector.
func (c *Metrics) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.m.all() {
		m.collect(c, ch)
	}
}

func (m *Manager) collect(c *Metrics, ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.nowMs()
	t := m.Table()
	kind := m.kind.String()
	for tags, s := range m.sensors {
		lv := []string{kind, tags.User, tags.ClientID}
		ch <- prometheus.MustNewConstMetric(c.rate, prometheus.GaugeValue, s.rate.Measure(m.cfg, now), lv...)
		if m.kind == ControllerMutation {
			if bound, ok := t.Limit(tags); ok {
				ch <- prometheus.MustNewConstMetric(c.tokens, prometheus.GaugeValue, s.bucket.Measure(m.cfg, bound, now), lv...)
			}
		}
		ch <- prometheus.MustNewConstMetric(c.throttleMs, prometheus.CounterValue, float64(s.throttleTimeMs), lv...)
		ch <- prometheus.MustNewConstMetric(c.throttleCnt, prometheus.CounterValue, float64(s.throttles), lv...)
	}
}
