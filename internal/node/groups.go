package node

import (
	"time"

	"sluice/internal/coordinator"
	"sluice/internal/coordinator/group"
)

// newGroupCoordinator builds the group coordinator from the group.* and
// offsets.* keys over the replica manager; it creates __consumer_offsets
// through this node's controller on first use.
func (n *Node) newGroupCoordinator() (*coordinator.Coordinator, error) {
	return coordinator.New(coordinator.Options{
		NodeID: n.cfg.NodeID(),
		Group: group.Config{
			MinSessionTimeout:             millis(n.cfg.Long("group.min.session.timeout.ms")),
			MaxSessionTimeout:             millis(n.cfg.Long("group.max.session.timeout.ms")),
			InitialRebalanceDelay:         millis(n.cfg.Long("group.initial.rebalance.delay.ms")),
			MaxSize:                       int(n.cfg.Int("group.max.size")),
			OffsetsRetention:              time.Duration(n.cfg.Long("offsets.retention.minutes")) * time.Minute,
			OffsetsRetentionCheckInterval: millis(n.cfg.Long("offsets.retention.check.interval.ms")),
			MaxMetadataSize:               int(n.cfg.Int("offset.metadata.max.bytes")),
			NewMemberJoinTimeout:          group.DefaultConfig().NewMemberJoinTimeout,
		},
		NumPartitions:     n.cfg.Int("offsets.topic.num.partitions"),
		ReplicationFactor: int16(n.cfg.Int("offsets.topic.replication.factor")),
		SegmentBytes:      n.cfg.Long("offsets.topic.segment.bytes"),
		WriteTimeout:      millis(n.cfg.Long("offsets.commit.timeout.ms")),
		Writer:            coordinator.ReplicaWriter{Replicas: n.replicas},
		Image:             n.loader.Image,
		CreateTopic:       coordinator.CreateTopicsCreator(n.CreateTopics),
		Clock:             n.clk,
		Logger:            n.logger.With("component", "group-coordinator"),
	})
}
