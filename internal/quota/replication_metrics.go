package quota

import "github.com/prometheus/client_golang/prometheus"

// ReplicationMetrics exports the replication quotas' byte-rate under
// Kafka's names (kafka.server:type=LeaderReplication and
// type=FollowerReplication, attribute byte-rate) as the node maps JMX
// names: kafka_server_leaderreplication_byte_rate and
// kafka_server_followerreplication_byte_rate.
type ReplicationMetrics struct {
	quotas []*ReplicationQuota
	descs  []*prometheus.Desc
}

// NewReplicationMetrics returns the collector of the given quotas.
func NewReplicationMetrics(quotas ...*ReplicationQuota) *ReplicationMetrics {
	m := &ReplicationMetrics{quotas: quotas}
	for _, q := range quotas {
		name := "kafka_server_leaderreplication_byte_rate"
		help := "Tracking byte-rate for LeaderReplication: bytes per second of throttled partitions sent to followers outside the ISR (leader.replication.throttled.rate)."
		if q.Kind() == FollowerReplication {
			name = "kafka_server_followerreplication_byte_rate"
			help = "Tracking byte-rate for FollowerReplication: bytes per second of throttled partitions fetched from leaders (follower.replication.throttled.rate)."
		}
		m.descs = append(m.descs, prometheus.NewDesc(name, help, nil, nil))
	}
	return m
}

// Describe implements prometheus.Collector.
func (m *ReplicationMetrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range m.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *ReplicationMetrics) Collect(ch chan<- prometheus.Metric) {
	for i, q := range m.quotas {
		ch <- prometheus.MustNewConstMetric(m.descs[i], prometheus.GaugeValue, q.Rate())
	}
}
