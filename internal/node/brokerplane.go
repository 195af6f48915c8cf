package node

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/broker"
	"sluice/internal/config"
	"sluice/internal/coordinator/group"
	"sluice/internal/coordinator/groupcoord"
	"sluice/internal/coordinator/runtime"
	"sluice/internal/metadata"
	"sluice/internal/metadata/publisher"
	"sluice/internal/replication"
	"sluice/internal/server"
)

// brokerPlane is the broker role: its lifecycle with the controller, the
// data plane, the coordinators and the client listeners. Metadata reaches
// it through its publisher, on the publisher's goroutine.
type brokerPlane struct {
	publisher    *publisher.Publisher
	lifecycle    *broker.LifecycleManager
	producerIDs  *broker.ProducerIDManager
	topicConfigs *broker.TopicConfigPublisher
	replicas     *replication.ReplicaManager
	groups       *groupcoord.GroupCoordinator
	server       *server.Server
}

// newBrokerPlane makes the publisher first: the metadata loader, built
// next, hands it every image. The rest is built by buildBroker once the
// controller channel exists; nothing is delivered before start.
func (n *Node) newBrokerPlane() *brokerPlane {
	b := &brokerPlane{}
	b.publisher = publisher.New(n.logger.With("component", "metadata-publisher"), b.publish)
	return b
}

// publish is the broker's one subscriber: topic configs first (a new
// topic's partitions are created with them), then the replica manager,
// then the group coordinator.
func (b *brokerPlane) publish(delta *metadata.Delta, image *metadata.Image) {
	b.topicConfigs.Publish(delta, image)
	if delta == nil || delta.Base().Offset() < 0 {
		// The whole image (the first delivery, or a snapshot replaced
		// the image, whose delta reports nothing removed).
		b.replicas.ApplyImage(image)
	} else {
		b.replicas.ApplyDelta(delta, image)
	}
	b.groups.ApplyImage(image)
}

// buildBroker builds the broker's components over the controller channel.
func (n *Node) buildBroker() error {
	b := n.broker
	b.lifecycle = broker.NewLifecycleManager(n.lifecycleOptions())
	b.producerIDs = broker.NewProducerIDManager(n.cfg.NodeID(), n.Image, n.channel)
	defaults, err := n.cfg.ResolveTopic(nil)
	if err != nil {
		return fmt.Errorf("broker log defaults: %w", err)
	}
	settings := broker.TopicSettings(defaults)
	b.replicas, err = replication.NewReplicaManager(replication.Options{
		BrokerID:        n.cfg.NodeID(),
		FS:              n.fsys,
		Logs:            n.storage.logs,
		DefaultSettings: &settings,
		Clock:           n.clk,
		Logger:          n.logger,
		Replication:     n.replicationOptions(),
	})
	if err != nil {
		return fmt.Errorf("replica manager: %w", err)
	}
	b.topicConfigs = broker.NewTopicConfigPublisher(n.cfg, b.replicas, n.logger.With("component", "topic-configs"))
	if b.groups, err = n.newGroupCoordinator(); err != nil {
		return fmt.Errorf("group coordinator: %w", err)
	}
	return n.newBrokerServer()
}

// lifecycleOptions configure the broker's registration and heartbeats; a
// single node registers through its own controller.
func (n *Node) lifecycleOptions() broker.LifecycleOptions {
	opts := broker.LifecycleOptions{
		NodeID:            n.cfg.NodeID(),
		ClusterID:         n.clusterID,
		Controller:        n.channel,
		Listeners:         n.registrationListeners,
		Rack:              n.cfg.String(config.BrokerRack),
		MetadataOffset:    func() int64 { return n.broker.publisher.Image().Offset() },
		HeartbeatInterval: millis(int64(n.cfg.Int(config.BrokerHeartbeatIntervalMs))),
		RequestTimeout:    millis(int64(n.cfg.Int(config.ControllerQuorumRequestTimeoutMs))),
		FS:                n.fsys,
		Dir:               metadataLogDir(n.cfg),
		Clock:             n.clk,
		Logger:            n.logger,
	}
	if n.cfg.SingleNode() {
		opts.Sole = n.ctrl.RegisterSoleBroker
	}
	return opts
}

// newGroupCoordinator builds the group coordinator from the group.* and
// offsets.* keys over the replica manager; it creates __consumer_offsets
// through the active controller on first use.
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
		Writer:            runtime.ReplicaWriter{Replicas: n.broker.replicas, Topic: groupcoord.OffsetsTopic},
		Image:             n.Image,
		CreateTopic:       runtime.CreateTopicsCreator(n.channel.CreateTopics),
		Clock:             n.clk,
		Logger:            n.logger.With("component", "group-coordinator"),
	})
}

// registrationListeners are the advertised broker listeners for the
// registration, an ephemeral port as bound.
func (n *Node) registrationListeners() []kmsg.BrokerRegistrationRequestListener {
	var out []kmsg.BrokerRegistrationRequestListener
	for _, l := range n.cfg.AdvertisedListeners() {
		if isControllerListener(n.cfg, l.Name) {
			continue
		}
		host, port := l.Host, l.Port
		if host == "" {
			host = hostName()
		}
		if port == 0 {
			port = boundPort(n.broker.server, l.Name)
		}
		rl := kmsg.NewBrokerRegistrationRequestListener()
		rl.Name, rl.Host, rl.Port, rl.SecurityProtocol = l.Name, host, uint16(port), securityProtocolID(l.Protocol)
		out = append(out, rl)
	}
	return out
}

// close stops delivering metadata, then the replica manager (fetchers, ISR
// loops and purgatories, waking parked requests).
func (b *brokerPlane) close() {
	b.publisher.Stop()
	if b.replicas != nil {
		b.replicas.Close()
	}
}
