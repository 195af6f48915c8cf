package node

import (
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quota"
)

// The topics' throttled replica lists (Kafka's QuotaConfig topic keys).
const (
	leaderThrottledReplicasKey   = "leader.replication.throttled.replicas"
	followerThrottledReplicasKey = "follower.replication.throttled.replicas"
)

// replicationThrottles applies the replication throttles and
// num.replica.fetchers as the metadata changes, as Kafka's
// BrokerConfigHandler and TopicConfigHandler do: the rates and the pool
// size through the dynamic broker config hook (this broker's value over
// the cluster default over the file), the throttled replica lists from
// each topic's configs as a metadata subscriber.
type replicationThrottles struct {
	nodeID   int32
	leader   *quota.ReplicationQuota
	follower *quota.ReplicationQuota
}

// newReplicationThrottles builds the two quotas with
// replication.quota.window.num windows of
// replication.quota.window.size.seconds, unlimited until the image says
// otherwise, and registers their byte-rate metrics.
func (n *Node) newReplicationThrottles() *replicationThrottles {
	cfg := quota.Config{
		Samples:  int(n.cfg.Int(config.ReplicationQuotaWindowNum)),
		WindowMs: int64(n.cfg.Int(config.ReplicationQuotaWindowSizeSeconds)) * 1000,
	}
	t := &replicationThrottles{
		nodeID:   n.cfg.NodeID(),
		leader:   quota.NewReplicationQuota(quota.LeaderReplication, cfg, n.clk),
		follower: quota.NewReplicationQuota(quota.FollowerReplication, cfg, n.clk),
	}
	n.registerDataPath(quota.NewReplicationMetrics(t.leader, t.follower))
	return t
}

// registerThrottleConfig makes the dynamic broker config hook apply the
// rates and num.replica.fetchers (Kafka's unset rate is Long.MAX_VALUE:
// unlimited).
func (n *Node) registerThrottleConfig() {
	b := n.broker
	b.dynconf.register("replication-throttles", []config.Key{config.LeaderReplicationThrottledRate,
		config.FollowerReplicationThrottledRate, config.NumReplicaFetchers}, func(ch brokerConfigChange) {
		if ch.touches(config.LeaderReplicationThrottledRate, config.FollowerReplicationThrottledRate) {
			b.throttles.leader.UpdateQuota(ch.cfg.Long(config.LeaderReplicationThrottledRate))
			b.throttles.follower.UpdateQuota(ch.cfg.Long(config.FollowerReplicationThrottledRate))
		}
		if ch.touches(config.NumReplicaFetchers) {
			b.replicas.SetNumReplicaFetchers(int(ch.cfg.Int(config.NumReplicaFetchers)))
		}
	})
}

// Publish reads every topic's throttled replica lists for this broker when
// topic configs changed or topics went (delta nil, or from an empty base:
// the whole image).
func (t *replicationThrottles) Publish(delta *metadata.Delta, im *metadata.Image) {
	if delta != nil && delta.Base().Offset() >= 0 && len(delta.RemovedTopics()) == 0 && !topicConfigsChanged(delta) {
		return
	}
	leader := map[string]quota.ThrottledReplicas{}
	follower := map[string]quota.ThrottledReplicas{}
	for _, name := range im.TopicNames() {
		configs := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: name})
		if v, ok := configs[leaderThrottledReplicasKey]; ok {
			leader[name] = quota.ParseThrottledReplicas(v, t.nodeID)
		}
		if v, ok := configs[followerThrottledReplicasKey]; ok {
			follower[name] = quota.ParseThrottledReplicas(v, t.nodeID)
		}
	}
	t.leader.SetThrottled(leader)
	t.follower.SetThrottled(follower)
}

func topicConfigsChanged(delta *metadata.Delta) bool {
	for _, res := range delta.ChangedConfigs() {
		if res.Type == metadata.ConfigResourceTopic {
			return true
		}
	}
	return false
}
