package config

// replicationThrottleKeyDefs are the replication throttle rates of Kafka's
// QuotaConfig.brokerQuotaConfigs: dynamic broker configs that KafkaConfig's
// ConfigDef (brokerKeyDefs) does not hold, set per broker or as the
// cluster default (kafka-reassign-partitions --throttle sets them on each
// broker of a move) and read by the broker's replication quotas.
func replicationThrottleKeyDefs() []KeyDef {
	doc := func(side string) string {
		return "A long representing the upper bound (bytes/sec) on replication traffic for " + side + "s enumerated in the property " +
			side + ".replication.throttled.replicas (for each topic). This property can be only set dynamically. It is suggested that the limit be kept above 1MB/s for accurate behaviour."
	}
	def := func(side string) KeyDef {
		return KeyDef{
			Name:       side + ".replication.throttled.rate",
			Type:       TypeLong,
			Default:    "9223372036854775807",
			Importance: ImportanceMedium,
			Update:     UpdateClusterWide,
			Checks:     []Check{{Kind: CheckRange, Min: "0", Max: ""}},
			Doc:        doc(side),
			// Kafka's DescribeConfigs lists them only when set (they are
			// not KafkaConfig keys): out of the full default set.
			Internal: true,
		}
	}
	return []KeyDef{def("follower"), def("leader")}
}

var (
	// LeaderReplicationThrottledRate is leader.replication.throttled.rate (long).
	LeaderReplicationThrottledRate = LongKey{"leader.replication.throttled.rate"}
	// FollowerReplicationThrottledRate is follower.replication.throttled.rate (long).
	FollowerReplicationThrottledRate = LongKey{"follower.replication.throttled.rate"}
)
