package web

import (
	"sort"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// sampleInterval is how often the sampler reads the node's registry;
// historySize samples keep an hour of it.
const (
	sampleInterval = 10 * time.Second
	historySize    = 360
)

// Metric names the sampler reads (the issue 18 naming contract): the
// aggregate BrokerTopicMetrics counters (no topic label) and the lag sums
// of the groups this node coordinates.
const (
	metricBytesIn    = "kafka_server_brokertopicmetrics_bytesin_total"
	metricBytesOut   = "kafka_server_brokertopicmetrics_bytesout_total"
	metricMessagesIn = "kafka_server_brokertopicmetrics_messagesin_total"
	metricLagSum     = "kafka_consumergroup_lag_sum"
)

// maxLagGroups bounds the groups a sample keeps lag for.
const maxLagGroups = 200

// sample is one reading of the node's counters and gauges. A counter
// missing from the registry is -1.
type sample struct {
	at                          time.Time
	bytesIn, bytesOut, messages float64
	lag                         map[string]float64 // group -> lag summed over its topics
}

// history is a bounded ring of samples, oldest first.
type history struct {
	mu   sync.Mutex
	ring []sample
	next int
	full bool
}

func newHistory(size int) *history { return &history{ring: make([]sample, size)} }

func (h *history) add(s sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ring[h.next] = s
	h.next = (h.next + 1) % len(h.ring)
	if h.next == 0 {
		h.full = true
	}
}

// samples returns a copy of the ring, oldest first.
func (h *history) samples() []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.full {
		return append([]sample(nil), h.ring[:h.next]...)
	}
	out := append([]sample(nil), h.ring[h.next:]...)
	return append(out, h.ring[:h.next]...)
}

// point is one value of a chart's series.
type point struct {
	at time.Time
	v  float64
}

// rates turns a counter of the samples into per-second rates between
// consecutive samples; a reset (restart) or a missing counter yields no point.
func rates(ss []sample, counter func(sample) float64) []point {
	var out []point
	for i := 1; i < len(ss); i++ {
		a, b := counter(ss[i-1]), counter(ss[i])
		dt := ss[i].at.Sub(ss[i-1].at).Seconds()
		if a < 0 || b < a || dt <= 0 {
			continue
		}
		out = append(out, point{at: ss[i].at, v: (b - a) / dt})
	}
	return out
}

// lagSeries is each group's lag over time, the groups sorted by name.
func lagSeries(ss []sample) (groups []string, series map[string][]point) {
	series = make(map[string][]point)
	for _, s := range ss {
		for g, v := range s.lag {
			series[g] = append(series[g], point{at: s.at, v: v})
		}
	}
	for g := range series {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	return groups, series
}

// sample reads the registry every sampleInterval until stop closes.
func (c *Console) sample(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	if c.opts.Metrics == nil {
		return
	}
	t := c.clock.NewTicker(sampleInterval)
	defer t.Stop()
	c.sampleOnce()
	for {
		select {
		case <-stop:
			return
		case <-t.C():
			c.sampleOnce()
		}
	}
}

// sampleOnce gathers the node's registry once into the ring.
func (c *Console) sampleOnce() {
	mfs, err := c.opts.Metrics.Gather()
	if err != nil && len(mfs) == 0 {
		c.log.Warn("web console: gather metrics", "err", err)
		return
	}
	now := c.clock.Now()
	c.history.add(readSample(now, mfs))
	c.topicRates.add(now, readTopicCounters(mfs))
}

// readSample picks the sampled series out of gathered families.
func readSample(at time.Time, mfs []*dto.MetricFamily) sample {
	s := sample{at: at, bytesIn: -1, bytesOut: -1, messages: -1, lag: make(map[string]float64)}
	for _, mf := range mfs {
		switch mf.GetName() {
		case metricBytesIn:
			s.bytesIn = aggregate(mf)
		case metricBytesOut:
			s.bytesOut = aggregate(mf)
		case metricMessagesIn:
			s.messages = aggregate(mf)
		case metricLagSum:
			readLag(mf, s.lag)
		}
	}
	return s
}

// aggregate is the series of a family without a topic label (Kafka's
// all-topics BrokerTopicMetrics), or -1.
func aggregate(mf *dto.MetricFamily) float64 {
	for _, m := range mf.GetMetric() {
		if label(m, "topic") == "" {
			return value(m)
		}
	}
	return -1
}

// readLag sums kafka_consumergroup_lag_sum over each group's topics.
func readLag(mf *dto.MetricFamily, into map[string]float64) {
	for _, m := range mf.GetMetric() {
		g := label(m, "consumergroup")
		if _, ok := into[g]; !ok && len(into) >= maxLagGroups {
			continue
		}
		into[g] += value(m)
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	}
	return 0
}
