package node

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/cleaner"
	"github.com/sluice-io/sluice/internal/replication"
)

// registerStorageMetrics puts the log dirs' Kafka-named series on the
// node's registry: the per-partition Log gauges and, with the cleaner
// on, the LogCleaner and LogCleanerManager gauges.
func (n *Node) registerStorageMetrics(s *storage) {
	n.registerDataPath(commitlog.NewLogCollector(s.mgr))
	if s.cleaner != nil {
		n.registerDataPath(cleaner.NewKafkaCollector(s.cleaner, n.cfg.LogDirs()))
	}
}

// registerReplicaMetrics puts the replica manager's BrokerTopicMetrics,
// ReplicaManager and ReplicaFetcherManager series on the node's registry.
func (n *Node) registerReplicaMetrics(rm *replication.ReplicaManager) {
	c := replication.NewCollector(rm)
	n.registerDataPath(c)
	n.registerHistory(c)
}

// registerHistory adds c to the registry the web console samples.
func (n *Node) registerHistory(c prometheus.Collector) {
	if err := n.history.Register(c); err != nil {
		n.logger.Warn("console history metrics not registered", "err", err)
	}
}

// registerDataPath registers c; a failure is logged, not fatal: metrics
// never stop a broker (a node built again on one registry, in tests, keeps
// the first one's series).
func (n *Node) registerDataPath(c prometheus.Collector) {
	if err := n.metrics.Register(c); err != nil {
		n.logger.Warn("data path metrics not registered", "err", err)
	}
}
