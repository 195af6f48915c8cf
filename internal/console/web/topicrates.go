package web

import (
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// maxRateTopics bounds the topics whose counters the sampler keeps.
const maxRateTopics = 10000

// topicCounters are one topic's BrokerTopicMetrics counters on this node.
type topicCounters struct{ bytesIn, bytesOut, messages float64 }

// topicRates keeps the last two readings of the per-topic counters, which
// is all a rate needs; the ring keeps only the aggregate, so an hour of
// thousands of topics costs nothing.
type topicRates struct {
	mu         sync.Mutex
	prev, cur  map[string]topicCounters
	prevAt, at time.Time
}

func (tr *topicRates) add(at time.Time, m map[string]topicCounters) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.prev, tr.prevAt = tr.cur, tr.at
	tr.cur, tr.at = m, at
}

// rate is a topic's per-second rates between the last two readings; ok is
// false without two readings of it (or after a counter reset).
func (tr *topicRates) rate(topic string) (r topicCounters, ok bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	a, okA := tr.prev[topic]
	b, okB := tr.cur[topic]
	dt := tr.at.Sub(tr.prevAt).Seconds()
	if !okA || !okB || dt <= 0 || b.bytesIn < a.bytesIn || b.bytesOut < a.bytesOut || b.messages < a.messages {
		return topicCounters{}, false
	}
	return topicCounters{
		bytesIn:  (b.bytesIn - a.bytesIn) / dt,
		bytesOut: (b.bytesOut - a.bytesOut) / dt,
		messages: (b.messages - a.messages) / dt,
	}, true
}

// readTopicCounters picks the per-topic series (label topic) of the
// BrokerTopicMetrics counters out of gathered families.
func readTopicCounters(mfs []*dto.MetricFamily) map[string]topicCounters {
	out := make(map[string]topicCounters)
	for _, mf := range mfs {
		var set func(*topicCounters, float64)
		switch mf.GetName() {
		case metricBytesIn:
			set = func(c *topicCounters, v float64) { c.bytesIn = v }
		case metricBytesOut:
			set = func(c *topicCounters, v float64) { c.bytesOut = v }
		case metricMessagesIn:
			set = func(c *topicCounters, v float64) { c.messages = v }
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			t := label(m, "topic")
			if t == "" {
				continue
			}
			c, ok := out[t]
			if !ok && len(out) >= maxRateTopics {
				continue
			}
			set(&c, value(m))
			out[t] = c
		}
	}
	return out
}
