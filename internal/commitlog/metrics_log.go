package commitlog

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// LogCollector renders Kafka's per-partition Log gauges
// (kafka.log:type=Log,name=Size|LogStartOffset|LogEndOffset|NumLogSegments)
// from the Manager's logs at scrape time. The walk copies the log list
// under the Manager's lock and then locks each log only to read it, so
// appends to other logs go on during a scrape.
type LogCollector struct {
	m                                  *Manager
	size, startOffset, endOffset, segs *prometheus.Desc
}

// NewLogCollector returns the collector of m's logs; register it on the
// node's registry.
func NewLogCollector(m *Manager) *LogCollector {
	desc := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("kafka_log_log_"+name, help, []string{"topic", "partition"}, nil)
	}
	return &LogCollector{
		m:           m,
		size:        desc("size", "Bytes of the partition's log segments on this broker."),
		startOffset: desc("logstartoffset", "First offset the partition's log serves."),
		endOffset:   desc("logendoffset", "Offset the next record appended to the partition's log gets."),
		segs:        desc("numlogsegments", "Segments of the partition's log."),
	}
}

// Describe sends the four gauges' descriptions.
func (c *LogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.size
	ch <- c.startOffset
	ch <- c.endOffset
	ch <- c.segs
}

// Collect reads every loaded log.
func (c *LogCollector) Collect(ch chan<- prometheus.Metric) {
	for _, l := range c.m.unsortedLogs() {
		st := l.gaugeStats()
		topic, partition := l.tp.Topic, strconv.Itoa(int(l.tp.Partition))
		ch <- prometheus.MustNewConstMetric(c.size, prometheus.GaugeValue, float64(st.size), topic, partition)
		ch <- prometheus.MustNewConstMetric(c.startOffset, prometheus.GaugeValue, float64(st.startOffset), topic, partition)
		ch <- prometheus.MustNewConstMetric(c.endOffset, prometheus.GaugeValue, float64(st.endOffset), topic, partition)
		ch <- prometheus.MustNewConstMetric(c.segs, prometheus.GaugeValue, float64(st.segments), topic, partition)
	}
}

// unsortedLogs is Logs without the sort (a scrape needs no order).
func (m *Manager) unsortedLogs() []*Log {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Log, 0, len(m.mu.logs))
	for _, l := range m.mu.logs {
		out = append(out, l)
	}
	return out
}

// logGauges are a log's Log gauges, read under one lock.
type logGauges struct {
	size, startOffset, endOffset int64
	segments                     int
}

func (l *Log) gaugeStats() logGauges {
	l.mu.RLock()
	defer l.mu.RUnlock()
	g := logGauges{startOffset: l.mu.logStartOffset, endOffset: l.activeLocked().nextOffset, segments: len(l.mu.segments)}
	for _, s := range l.mu.segments {
		g.size += s.size.Load()
	}
	return g
}
