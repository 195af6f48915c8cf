package node

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quota"
	"github.com/sluice-io/sluice/internal/replication"
)

// Kafka's replication throttle keys: the broker's rates (DynamicConfig's
// QuotaConfig.brokerQuotaConfigs, bytes per second, Long.MAX_VALUE when
// unset) and the topics' throttled replica lists.
const (
	leaderThrottledRateKey       = "leader.replication.throttled.rate"
	followerThrottledRateKey     = "follower.replication.throttled.rate"
	leaderThrottledReplicasKey   = "leader.replication.throttled.replicas"
	followerThrottledReplicasKey = "follower.replication.throttled.replicas"
)

// replicationThrottles applies the replication throttles and
// num.replica.fetchers from the metadata image as they change, as Kafka's
// BrokerConfigHandler and TopicConfigHandler do: the rates from this
// broker's dynamic config over the cluster default, the throttled replica
// lists from each topic's configs. It is a metadata subscriber until the
// dynamic broker config hook takes over its broker half (applyBroker).
type replicationThrottles struct {
	nodeID   int32
	static   *config.Config
	leader   *quota.ReplicationQuota
	follower *quota.ReplicationQuota
	logger   *slog.Logger
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
		static:   n.cfg,
		leader:   quota.NewReplicationQuota(quota.LeaderReplication, cfg, n.clk),
		follower: quota.NewReplicationQuota(quota.FollowerReplication, cfg, n.clk),
		logger:   n.logger.With("component", "replication-throttles"),
	}
	n.registerDataPath(quota.NewReplicationMetrics(t.leader, t.follower))
	return t
}

// Publish applies a metadata change to rm: nil delta (or one from an
// empty base) means the whole image.
func (t *replicationThrottles) Publish(rm *replication.ReplicaManager, delta *metadata.Delta, im *metadata.Image) {
	whole := delta == nil || delta.Base().Offset() < 0
	brokerChanged, topicsChanged := whole, whole || (delta != nil && len(delta.RemovedTopics()) > 0)
	if !whole {
		for _, res := range delta.ChangedConfigs() {
			switch res.Type {
			case metadata.ConfigResourceBroker:
				brokerChanged = true
			case metadata.ConfigResourceTopic:
				topicsChanged = true
			}
		}
	}
	if brokerChanged {
		perBroker := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: strconv.Itoa(int(t.nodeID))})
		clusterDefault := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: ""})
		t.applyBroker(rm, perBroker, clusterDefault)
	}
	if topicsChanged {
		t.applyTopics(im)
	}
}

// applyBroker sets the rates and the fetcher pool's size from the dynamic
// broker layers (per broker over cluster default over the static file).
func (t *replicationThrottles) applyBroker(rm *replication.ReplicaManager, perBroker, clusterDefault map[string]string) {
	t.leader.UpdateQuota(t.rate(leaderThrottledRateKey, perBroker, clusterDefault))
	t.follower.UpdateQuota(t.rate(followerThrottledRateKey, perBroker, clusterDefault))
	cfg, err := t.static.WithDynamic(perBroker, clusterDefault)
	if err != nil {
		t.logger.Warn("dynamic broker configs refused; num.replica.fetchers unchanged", "err", err)
		return
	}
	if rm != nil {
		rm.SetNumReplicaFetchers(int(cfg.Int(config.NumReplicaFetchers)))
	}
}

// rate is BrokerConfigHandler's getOrDefault: this broker's value, else
// the cluster default's, else unlimited.
func (t *replicationThrottles) rate(key string, perBroker, clusterDefault map[string]string) int64 {
	for _, layer := range []map[string]string{perBroker, clusterDefault} {
		v, ok := layer[key]
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			t.logger.Warn("replication throttle rate not a number; unlimited", "key", key, "value", v)
			return quota.Unlimited
		}
		return n
	}
	return quota.Unlimited
}

// applyTopics reads every topic's throttled replica lists for this broker.
func (t *replicationThrottles) applyTopics(im *metadata.Image) {
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
