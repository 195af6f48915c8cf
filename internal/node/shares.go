package node

// Share groups (KIP-932) on a broker: the share coordinator over
// __share_group_state, the persister every share partition's leader and
// the group coordinator reach it through, and the share-partition manager
// that serves ShareFetch and ShareAcknowledge.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/broker/sharefetch"
	"github.com/sluice-io/sluice/internal/broker/sharepersist"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/share"
	"github.com/sluice-io/sluice/internal/coordinator/sharecoord"
	"github.com/sluice-io/sluice/internal/kafka"
	sharepart "github.com/sluice-io/sluice/internal/share"
)

// shareGroupConfig reads the group.share.* keys of share groups into cfg.
func shareGroupConfig(c *config.Config, cfg *group.Config) error {
	s, err := c.ShareGroups()
	if err != nil {
		return err
	}
	ai := s.AssignmentInterval
	if ai <= 0 {
		ai = -1 // Kafka's 0: a new target at every heartbeat that needs one
	}
	cfg.Share = group.ShareConfig{SessionTimeout: s.SessionTimeout, HeartbeatInterval: s.HeartbeatInterval, MaxSize: s.MaxSize,
		InitializeRetryInterval: s.InitializeRetryInterval, AssignmentInterval: ai}
	return nil
}

// newShareCoordinator builds the share coordinator from the
// share.coordinator.* keys over the replica manager; it creates
// __share_group_state through the active controller on first use.
func (n *Node) newShareCoordinator() (*sharecoord.ShareCoordinator, error) {
	b := n.broker
	cfg := share.DefaultConfig()
	cfg.SnapshotUpdateRecordsPerSnapshot = int(n.cfg.Int(config.ShareCoordinatorSnapshotUpdateRecordsPerSnapshot))
	cfg.ColdPartitionSnapshotInterval = millis(int64(n.cfg.Int(config.ShareCoordinatorColdPartitionSnapshotIntervalMs)))
	return sharecoord.New(sharecoord.Options{
		NodeID:            n.cfg.NodeID(),
		Share:             cfg,
		NumPartitions:     n.cfg.Int(config.ShareCoordinatorStateTopicNumPartitions),
		ReplicationFactor: int16(n.cfg.Int(config.ShareCoordinatorStateTopicReplicationFactor)),
		MinISR:            n.cfg.Int(config.ShareCoordinatorStateTopicMinISR),
		SegmentBytes:      int64(n.cfg.Int(config.ShareCoordinatorStateTopicSegmentBytes)),
		Writer:            runtime.ReplicaWriter{Replicas: b.replicas, Topic: sharecoord.ShareGroupStateTopic},
		Image:             n.Image,
		CreateTopic:       runtime.CreateTopicsCreator(n.channel.CreateTopics),
		DeleteRecords: func(_ context.Context, partition int32, before int64) error {
			_, err := b.replicas.DeleteRecords(kafka.TopicPartition{Topic: sharecoord.ShareGroupStateTopic, Partition: partition}, before)
			return err
		},
		PruneInterval: millis(int64(n.cfg.Int(config.ShareCoordinatorStateTopicPruneIntervalMs))),
		WriteTimeout:  millis(int64(n.cfg.Int(config.ShareCoordinatorWriteTimeoutMs))),
		Clock:         n.clk,
		Logger:        n.logger.With("component", "share-coordinator"),
	})
}

// newSharePersister reaches the share coordinator: this broker's for the
// state partitions it leads, others over the peer pool.
func (n *Node) newSharePersister() *sharepersist.Persister {
	sc := n.broker.shareCoord
	listener := n.cfg.InterBrokerListenerName()
	opts := sharepersist.Options{
		NodeID:       n.cfg.NodeID(),
		Image:        n.Image,
		PartitionFor: runtime.PartitionFor,
		Locate: func(ctx context.Context, key string) (int32, int16) {
			node, code := sc.FindCoordinator(ctx, key, listener)
			return node.NodeID, code
		},
		Local: func(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
			return localShareState(ctx, sc, req)
		},
		Listener: listener,
		Clock:    n.clk,
	}
	if n.peers != nil {
		opts.Peers = n.peers
	}
	return sharepersist.New(opts)
}

// localShareState serves a state request on this broker's coordinator.
func localShareState(ctx context.Context, sc *sharecoord.ShareCoordinator, req kmsg.Request) (kmsg.Response, error) {
	switch r := req.(type) {
	case *kmsg.InitializeShareGroupStateRequest:
		return sc.InitializeState(ctx, r), nil
	case *kmsg.ReadShareGroupStateRequest:
		return sc.ReadState(ctx, r), nil
	case *kmsg.WriteShareGroupStateRequest:
		return sc.WriteState(ctx, r), nil
	case *kmsg.DeleteShareGroupStateRequest:
		return sc.DeleteState(ctx, r), nil
	case *kmsg.ReadShareGroupStateSummaryRequest:
		return sc.ReadStateSummary(ctx, r), nil
	}
	return nil, errors.New("not a share state request")
}

// groupSharePersister is the group coordinator's side of the persister:
// whole requests of a group, one share partition at a time, and the
// offsets admin APIs' summaries, resets and partition ends.
type groupSharePersister struct {
	p *sharepersist.Persister
	n *Node
}

func (g groupSharePersister) ReadStateSummary(ctx context.Context, groupID string, topicID kafka.UUID, partition int32) (group.ShareStateSummary, error) {
	s, err := g.p.ReadSummary(ctx, sharepersist.Key{GroupID: groupID, TopicID: topicID, Partition: partition}, 0)
	if err != nil {
		return group.ShareStateSummary{}, err
	}
	return group.ShareStateSummary{StateEpoch: s.StateEpoch, LeaderEpoch: s.LeaderEpoch, StartOffset: s.StartOffset, DeliveryCompleteCount: s.DeliveryCompleteCount}, nil
}

func (g groupSharePersister) InitializeStateAt(ctx context.Context, groupID string, topicID kafka.UUID, partition, stateEpoch int32, startOffset int64) error {
	return g.p.Initialize(ctx, sharepersist.Key{GroupID: groupID, TopicID: topicID, Partition: partition}, stateEpoch, startOffset)
}

// LatestOffset is the partition's high watermark, as the lag metrics read
// it: this broker's replica's, or the leader's through ListOffsets.
func (g groupSharePersister) LatestOffset(ctx context.Context, topic string, partition int32) (int64, error) {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	hw, ok := g.n.highWatermarks(ctx, []kafka.TopicPartition{tp})[tp]
	if !ok {
		return -1, kerr.LeaderNotAvailable
	}
	return hw, nil
}

func (g groupSharePersister) InitializeState(ctx context.Context, req group.ShareStateRequest) error {
	for _, t := range req.Topics {
		start := sharepart.UninitializedStartOffset
		if t.StartAtZero {
			start = 0
		}
		for _, p := range t.Partitions {
			if err := g.p.Initialize(ctx, sharepersist.Key{GroupID: req.GroupID, TopicID: t.TopicID, Partition: p}, req.GroupEpoch, start); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g groupSharePersister) DeleteState(ctx context.Context, req group.ShareStateRequest) error {
	return g.each(req, func(k sharepersist.Key) error { return g.p.Delete(ctx, k) })
}

func (g groupSharePersister) each(req group.ShareStateRequest, fn func(sharepersist.Key) error) error {
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			if err := fn(sharepersist.Key{GroupID: req.GroupID, TopicID: t.TopicID, Partition: p}); err != nil {
				return err
			}
		}
	}
	return nil
}

// newShareFetcher builds the share-partition manager over the replica
// manager and the persister; each group's settings are its group configs
// over the group.share.* keys, read at each use.
func (n *Node) newShareFetcher(p *sharepersist.Persister) *sharefetch.Manager {
	return sharefetch.New(sharefetch.Options{
		NodeID:           n.cfg.NodeID(),
		Image:            n.Image,
		Log:              n.broker.replicas,
		Persister:        p,
		Group:            n.shareGroupSettings,
		MaxShareSessions: int(n.cfg.Int(config.GroupShareMaxShareSessions)),
		Clock:            n.clk,
		WriteTimeout:     millis(int64(n.cfg.Int(config.RequestTimeoutMs))),
		Logger:           n.logger.With("component", "share-fetch"),
	})
}

// shareGroupSettings resolves a share group's settings from its group
// configs, clamped to the broker's bounds as Kafka's GroupConfig.evaluate.
func (n *Node) shareGroupSettings(groupID string) sharefetch.GroupSettings {
	s := n.cfg.GroupSettings(n.Image().GroupConfigs(groupID))
	return sharefetch.GroupSettings{
		Partition: sharepart.Config{
			MaxInFlightRecords: s.SharePartitionMaxRecordLocks(),
			DeliveryCountLimit: s.ShareDeliveryCountLimit(),
			RecordLockDuration: s.ShareRecordLockDuration(),
		},
		AutoOffsetReset:  s.ShareAutoOffsetReset(),
		ReadCommitted:    s.ShareReadCommitted(),
		RenewAcknowledge: s.ShareRenewAcknowledgeEnable(),
	}
}

// buildShares builds the share coordinator, the persister and the
// share-partition manager, and hands the group coordinator its persister.
func (n *Node) buildShares() error {
	b := n.broker
	var err error
	if b.shareCoord, err = n.newShareCoordinator(); err != nil {
		return err
	}
	p := n.newSharePersister()
	b.groups.SetSharePersister(groupSharePersister{p: p, n: n})
	b.shareFetch = n.newShareFetcher(p)
	return nil
}

// sharePlaneDeps are the share APIs' components.
func (n *Node) sharePlaneDeps() *api.SharePlaneDeps {
	b := n.broker
	return &api.SharePlaneDeps{Groups: b.groups, Offsets: b.groups, Fetcher: b.shareFetch, Coordinator: b.shareCoord, Locator: b.shareCoord}
}
