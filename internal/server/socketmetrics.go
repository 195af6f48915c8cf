package server

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// listenerMetrics are one listener's counters of Kafka's
// socket-server-metrics group (kafka.server:type=socket-server-metrics,
// listener=...), plain atomics read at scrape time.
type listenerMetrics struct {
	name        string
	connections atomic.Int64
	created     atomic.Uint64
	bytesIn     atomic.Uint64
	bytesOut    atomic.Uint64
}

// socketMetrics are every listener's, of one server or of a node's servers
// sharing them (Options.KafkaMetrics).
type socketMetrics struct {
	mu        sync.Mutex
	listeners []*listenerMetrics
	byName    map[string]*listenerMetrics

	connections, created, bytesIn, bytesOut *prometheus.Desc
}

func newSocketMetrics(listeners []Listener) *socketMetrics {
	label := []string{"listener"}
	m := &socketMetrics{
		byName: make(map[string]*listenerMetrics, len(listeners)),
		connections: prometheus.NewDesc("kafka_server_socketservermetrics_connection_count",
			"Open client connections (connection-count).", label, nil),
		created: prometheus.NewDesc("kafka_server_socketservermetrics_connection_creation_total",
			"Client connections accepted (connection-creation-total).", label, nil),
		bytesIn: prometheus.NewDesc("kafka_server_socketservermetrics_incoming_byte_total",
			"Request bytes received, frame size prefixes included (incoming-byte-total).", label, nil),
		bytesOut: prometheus.NewDesc("kafka_server_socketservermetrics_outgoing_byte_total",
			"Response bytes sent, frame size prefixes included (outgoing-byte-total).", label, nil),
	}
	m.add(listeners)
	return m
}

// add makes the listeners' counters, exported from now on.
func (m *socketMetrics) add(listeners []Listener) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range listeners {
		if _, dup := m.byName[l.Name]; dup {
			continue
		}
		lm := &listenerMetrics{name: l.Name}
		m.listeners = append(m.listeners, lm)
		m.byName[l.Name] = lm
	}
}

// listener returns a listener's counters (once per connection).
func (m *socketMetrics) listener(name string) *listenerMetrics {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lm, ok := m.byName[name]; ok {
		return lm
	}
	// New adds the names from the same options; a stray name gets a
	// throwaway set rather than failing a connection.
	return &listenerMetrics{name: name}
}

func (m *socketMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- m.connections
	ch <- m.created
	ch <- m.bytesIn
	ch <- m.bytesOut
}

func (m *socketMetrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	listeners := m.listeners[:len(m.listeners):len(m.listeners)]
	m.mu.Unlock()
	for _, l := range listeners {
		ch <- prometheus.MustNewConstMetric(m.connections, prometheus.GaugeValue, float64(l.connections.Load()), l.name)
		ch <- prometheus.MustNewConstMetric(m.created, prometheus.CounterValue, float64(l.created.Load()), l.name)
		ch <- prometheus.MustNewConstMetric(m.bytesIn, prometheus.CounterValue, float64(l.bytesIn.Load()), l.name)
		ch <- prometheus.MustNewConstMetric(m.bytesOut, prometheus.CounterValue, float64(l.bytesOut.Load()), l.name)
	}
}
