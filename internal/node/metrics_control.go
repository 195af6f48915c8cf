package node

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/coordinator/groupcoord"
	"github.com/sluice-io/sluice/internal/quorum"
)

// groupScrapeTimeout bounds a scrape's wait for the group coordinator's
// shards (each answers from its own loop) and for the partition leaders'
// high watermarks.
const groupScrapeTimeout = 2 * time.Second

// registerControlMetrics registers the control plane's collectors, as
// Kafka registers them by role: the KafkaController gauges on a
// controller, raft-metrics on every node (a voter's or an observer's),
// and on a broker its BrokerState, the group coordinator's metrics and
// the lag of the groups it coordinates. A collision is a bug of ours: it
// is logged and the node runs without those series.
func (n *Node) registerControlMetrics() {
	var cs []prometheus.Collector
	if n.ctrl != nil {
		cs = append(cs, n.ctrl.MetricsCollector())
	}
	var latencies *quorum.RaftLatencies
	if n.meta.driver != nil {
		latencies = n.meta.driver.Latencies()
	}
	cs = append(cs, quorum.NewMetricsCollector(n.meta.view, latencies, n.clk))
	if n.broker != nil {
		groups := groupcoord.NewMetricsCollector(n.broker.groups, n.highWatermarks, groupScrapeTimeout)
		cs = append(cs, brokerStateCollector{n}, groups)
		n.registerHistory(groups)
	}
	for _, c := range cs {
		if err := n.metrics.Register(c); err != nil {
			n.logger.Error("control-plane metrics not registered", "err", err)
		}
	}
}

// Kafka's BrokerState values (org.apache.kafka.metadata.BrokerState).
const (
	brokerStarting = 1
	brokerRecovery = 2
	brokerRunning  = 3
)

var brokerStateDesc = prometheus.NewDesc("kafka_server_kafkaserver_brokerstate",
	"Kafka's BrokerState: 1 STARTING (not registered), 2 RECOVERY (registered, fenced), 3 RUNNING (unfenced).", nil, nil)

// brokerStateCollector derives the broker's state from its registration
// and its own record in the metadata it has published. The shutdown
// states (6, 7) are not reported: the node stops serving metrics first.
type brokerStateCollector struct{ n *Node }

func (brokerStateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- brokerStateDesc }

func (c brokerStateCollector) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(brokerStateDesc, prometheus.GaugeValue, float64(c.n.brokerState()))
}

func (n *Node) brokerState() int {
	lc := n.broker.lifecycle
	if !lc.Registered() {
		return brokerStarting
	}
	b, ok := n.broker.publisher.Image().Broker(n.cfg.NodeID())
	if !ok || b.Fenced || b.Epoch != lc.Epoch() {
		return brokerRecovery
	}
	return brokerRunning
}
