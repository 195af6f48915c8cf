package node

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/broker/sharefetch"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/coordinator/group"
	"github.com/sluice-io/sluice/internal/coordinator/groupcoord"
	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/coordinator/sharecoord"
	"github.com/sluice-io/sluice/internal/coordinator/txn"
	"github.com/sluice-io/sluice/internal/coordinator/txncoord"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/metadata/publisher"
	"github.com/sluice-io/sluice/internal/replication"
	"github.com/sluice-io/sluice/internal/server"
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
	txns         *txncoord.TransactionCoordinator
	// shareCoord keeps share groups' state in __share_group_state and
	// shareFetch serves their fetches (KIP-932).
	shareCoord *sharecoord.ShareCoordinator
	shareFetch *sharefetch.Manager
	// markers writes transaction markers as leader: for this broker's
	// transaction coordinator and the WriteTxnMarkers handler alike.
	markers *broker.MarkerWriter
	// verifier asks transaction coordinators about clients' transactional
	// batches (nil with transaction.partition.verification.enable=false).
	verifier *broker.TxnVerifier
	server   *server.Server
	// dynconf re-resolves the dynamic broker configs and tells appliers.
	dynconf *brokerConfigs
	// throttles applies replication throttles and num.replica.fetchers.
	throttles *replicationThrottles
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
// then the group and transaction coordinators.
func (b *brokerPlane) publish(delta *metadata.Delta, image *metadata.Image) {
	b.topicConfigs.Publish(delta, image)
	b.dynconf.publish(delta, image)
	b.throttles.Publish(delta, image)
	if delta == nil || delta.Base().Offset() < 0 {
		// The whole image (the first delivery, or a snapshot replaced
		// the image, whose delta reports nothing removed).
		b.replicas.ApplyImage(image)
	} else {
		b.replicas.ApplyDelta(delta, image)
	}
	b.groups.ApplyImage(image)
	b.txns.ApplyImage(image)
	b.shareCoord.ApplyImage(image)
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
	b.verifier = n.newTxnVerifier()
	b.throttles = n.newReplicationThrottles()
	b.replicas, err = replication.NewReplicaManager(replication.Options{
		BrokerID:        n.cfg.NodeID(),
		FS:              n.fsys,
		Logs:            n.checkpointedLogs(),
		DefaultSettings: &settings,
		Clock:           n.clk,
		Logger:          n.logger,
		Replication:     n.replicationOptions(),
		Verifier:        verifierOrNil(b.verifier),
		VerifyRetry:     verificationRetry(n.cfg),
	})
	if err != nil {
		return fmt.Errorf("replica manager: %w", err)
	}
	n.registerReplicaMetrics(b.replicas)
	b.topicConfigs = broker.NewTopicConfigPublisher(n.cfg, b.replicas, n.logger.With("component", "topic-configs"))
	b.dynconf = n.newBrokerConfigs()
	n.registerThrottleConfig()
	if b.groups, err = n.newGroupCoordinator(); err != nil {
		return fmt.Errorf("group coordinator: %w", err)
	}
	b.markers = broker.NewMarkerWriter(b.replicas, b.groups)
	if b.txns, err = n.newTransactionCoordinator(); err != nil {
		return fmt.Errorf("transaction coordinator: %w", err)
	}
	if err := n.buildShares(); err != nil {
		return fmt.Errorf("share groups: %w", err)
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
	n.wireDirAssignment(&opts)
	return opts
}

// newGroupCoordinator builds the group coordinator from the group.* and
// offsets.* keys over the replica manager; it creates __consumer_offsets
// through the active controller on first use.
func (n *Node) newGroupCoordinator() (*groupcoord.GroupCoordinator, error) {
	gcfg := group.Config{
		MinSessionTimeout:             millis(int64(n.cfg.Int(config.GroupMinSessionTimeoutMs))),
		MaxSessionTimeout:             millis(int64(n.cfg.Int(config.GroupMaxSessionTimeoutMs))),
		InitialRebalanceDelay:         millis(int64(n.cfg.Int(config.GroupInitialRebalanceDelayMs))),
		MaxSize:                       int(n.cfg.Int(config.GroupMaxSize)),
		OffsetsRetention:              time.Duration(int64(n.cfg.Int(config.OffsetsRetentionMinutes))) * time.Minute,
		OffsetsRetentionCheckInterval: millis(n.cfg.Long(config.OffsetsRetentionCheckIntervalMs)),
		MaxMetadataSize:               int(n.cfg.Int(config.OffsetMetadataMaxBytes)),
		NewMemberJoinTimeout:          group.DefaultConfig().NewMemberJoinTimeout,
	}
	if err := consumerGroupConfig(n.cfg, &gcfg); err != nil {
		return nil, err
	}
	if err := shareGroupConfig(n.cfg, &gcfg); err != nil {
		return nil, err
	}
	return groupcoord.New(groupcoord.Options{
		NodeID:            n.cfg.NodeID(),
		Group:             gcfg,
		NumPartitions:     n.cfg.Int(config.OffsetsTopicNumPartitions),
		ReplicationFactor: int16(n.cfg.Int(config.OffsetsTopicReplicationFactor)),
		SegmentBytes:      int64(n.cfg.Int(config.OffsetsTopicSegmentBytes)),
		WriteTimeout:      millis(int64(n.cfg.Int(config.OffsetsCommitTimeoutMs))),
		Writer:            runtime.ReplicaWriter{Replicas: n.broker.replicas, Topic: groupcoord.OffsetsTopic},
		Verifier:          verifierOrNil(n.broker.verifier),
		Image:             n.Image,
		CreateTopic:       runtime.CreateTopicsCreator(n.channel.CreateTopics),
		Clock:             n.clk,
		Logger:            n.logger.With("component", "group-coordinator"),
	})
}

// newTransactionCoordinator builds the transaction coordinator from the
// transaction.* keys over the replica manager; it creates
// __transaction_state through the active controller on first use and
// writes markers through the broker's MarkerWriter or to other leaders
// over the peer pool.
func (n *Node) newTransactionCoordinator() (*txncoord.TransactionCoordinator, error) {
	b := n.broker
	markers := txncoord.MarkerOptions{
		Local:          b.markers,
		Listener:       n.cfg.InterBrokerListenerName(),
		RequestTimeout: millis(int64(n.cfg.Int(config.RequestTimeoutMs))),
	}
	if n.peers != nil {
		markers.Peers = n.peers
	}
	cfg := txnConfig(n.cfg)
	cfg.OffsetsPartitionFor = b.groups.PartitionFor
	return txncoord.New(txncoord.Options{
		NodeID:            n.cfg.NodeID(),
		Txn:               cfg,
		NumPartitions:     n.cfg.Int(config.TransactionStateLogNumPartitions),
		ReplicationFactor: int16(n.cfg.Int(config.TransactionStateLogReplicationFactor)),
		MinISR:            n.cfg.Int(config.TransactionStateLogMinISR),
		SegmentBytes:      int64(n.cfg.Int(config.TransactionStateLogSegmentBytes)),
		// Kafka's TransactionStateManager appends with request.timeout.ms.
		WriteTimeout: millis(int64(n.cfg.Int(config.RequestTimeoutMs))),
		Writer:       runtime.ReplicaWriter{Replicas: b.replicas, Topic: txncoord.TransactionStateTopic},
		Image:        n.Image,
		CreateTopic:  runtime.CreateTopicsCreator(n.channel.CreateTopics),
		ProducerIDs:  b.producerIDs,
		Markers:      markers,
		Clock:        n.clk,
		Logger:       n.logger.With("component", "transaction-coordinator"),
	})
}

// newTxnVerifier builds the verifier the replica manager asks before a
// client's first transactional batch (nil when
// transaction.partition.verification.enable is false). The replica
// manager is built with it, before the coordinator it calls locally.
func (n *Node) newTxnVerifier() *broker.TxnVerifier {
	if !n.cfg.Bool(config.TransactionPartitionVerificationEnable) {
		return nil
	}
	opts := broker.TxnVerifierOptions{
		NodeID:         n.cfg.NodeID(),
		Image:          n.Image,
		Listener:       n.cfg.InterBrokerListenerName(),
		Local:          localTxns{n.broker},
		RequestTimeout: millis(int64(n.cfg.Int(config.RequestTimeoutMs))),
		Logger:         n.logger.With("component", "txn-verifier"),
	}
	if n.peers != nil {
		opts.Peers = n.peers
	}
	return broker.NewTxnVerifier(opts)
}

// verifierOrNil keeps a nil verifier a nil interface.
func verifierOrNil(v *broker.TxnVerifier) replication.TxnVerifier {
	if v == nil {
		return nil
	}
	return v
}

// localTxns is the broker's transaction coordinator for the verifier,
// which is built before it.
type localTxns struct{ b *brokerPlane }

func (l localTxns) PartitionFor(id string) int32 { return l.b.txns.PartitionFor(id) }

func (l localTxns) Verify(ctx context.Context, req txn.VerifyRequest) []int16 {
	return l.b.txns.Verify(ctx, req)
}

func (l localTxns) AddPartitions(ctx context.Context, req txn.AddPartitionsRequest) int16 {
	return l.b.txns.AddPartitions(ctx, req)
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

// close stops delivering metadata, then the transaction coordinator (its
// shards and marker channel) and the verifier, which write and ask through
// the replica manager and the peers, then the replica manager (fetchers,
// ISR loops and purgatories, waking parked requests).
// stopServing ends the broker's client side. Parked JoinGroup and
// SyncGroup requests are answered (NOT_COORDINATOR) before the listeners
// drain; the controller moves this broker's leadership away before it
// goes. A broker whose build failed half way has only some of them.
func (b *brokerPlane) stopServing(abrupt bool) error {
	if b.groups != nil {
		b.groups.Close()
	}
	if b.lifecycle != nil && !abrupt {
		b.lifecycle.ControlledShutdown(shutdownGrace / 2)
	}
	if b.lifecycle != nil {
		b.lifecycle.Stop()
	}
	return shutdownServer(b.server)
}

func (b *brokerPlane) close() {
	b.publisher.Stop()
	if b.shareFetch != nil {
		b.shareFetch.Close()
	}
	if b.shareCoord != nil {
		b.shareCoord.Close()
	}
	if b.txns != nil {
		b.txns.Close()
	}
	if b.verifier != nil {
		b.verifier.Close()
	}
	if b.replicas != nil {
		b.replicas.Close()
	}
}
