package node

import (
	"time"

	"sluice/internal/config"
	"sluice/internal/coordinator/group"
	"sluice/internal/coordinator/groupcoord"
	"sluice/internal/coordinator/runtime"
)

// newGroupCoordinator builds the group coordinator from the group.* and
// offsets.* keys over the replica manager; it creates __consumer_offsets
// through this node's controller on first use.
func (n *Node) newGroupCoordinator() (*groupcoord.GroupCoordinator, error) {
	return groupcoord.New(groupcoord.Options{
		NodeID: n.cfg.NodeID(),
		Group: group.Config{
			MinSessionTimeout:             millis(int64(n.cfg.Int(config.GroupMinSessionTimeoutMs))),
			MaxSessionTimeout:             millis(int64(n.cfg.Int(config.GroupMaxSessionTimeoutMs))),
			InitialRebalanceDelay:         millis(int64(n.cfg.Int(config.GroupInitialRebalanceDelayMs))),
			MaxSize:                       int(n.cfg.Int(config.GroupMaxSize)),
			OffsetsRetention:              time.Duration(int64(n.cfg.Int(config.OffsetsRetentionMinutes))) * time.Minute,
			OffsetsRetentionCheckInterval: millis(n.cfg.Long(config.OffsetsRetentionCheckIntervalMs)),
			MaxMetadataSize:               int(n.cfg.Int(config.OffsetMetadataMaxBytes)),
			NewMemberJoinTimeout:          group.DefaultConfig().NewMemberJoinTimeout,
		},
		NumPartitions:     n.cfg.Int(config.OffsetsTopicNumPartitions),
		ReplicationFactor: int16(n.cfg.Int(config.OffsetsTopicReplicationFactor)),
		SegmentBytes:      int64(n.cfg.Int(config.OffsetsTopicSegmentBytes)),
		WriteTimeout:      millis(int64(n.cfg.Int(config.OffsetsCommitTimeoutMs))),
		Writer:            runtime.ReplicaWriter{Replicas: n.replicas, Topic: groupcoord.OffsetsTopic},
		Image:             n.loader.Image,
		CreateTopic:       runtime.CreateTopicsCreator(n.CreateTopics),
		Clock:             n.clk,
		Logger:            n.logger.With("component", "group-coordinator"),
	})
}
