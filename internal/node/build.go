package node

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/controller/quorumctl"
	"github.com/sluice-io/sluice/internal/transport"
)

// build makes every component the node's roles need, in dependency order:
// storage, the broker's metadata publisher (the loader's subscriber), the
// metadata quorum (a voter's driver or a dedicated broker's observer), the
// quorum controller, the channel to the active controller, the broker's
// data plane, the listeners and the console.
func (n *Node) build() error {
	metaDir := metadataLogDir(n.cfg)
	dirs := logdir.AllDirs(n.cfg.LogDirs(), metaDir)
	n.logStarting(dirs)
	if err := checkListeners(n.cfg); err != nil {
		return err
	}
	var err error
	if n.locks, err = logdir.Lock(dirs); err != nil {
		return err
	}
	n.fsys = faultFS(n.fsys, n.logger)  // fault tests only (-tags sluicefault)
	n.clk = faultClock(n.clk, n.logger) // fault tests only (-tags sluicefault)
	var formatted []string
	if n.clusterID, formatted, err = logdir.EnsureFormatted(n.fsys, dirs, n.cfg.NodeID(), n.cfg.SingleNode()); err != nil {
		return err
	}
	n.logFormatted(formatted)
	if n.tls, err = n.newTLS(); err != nil {
		return err
	}
	if n.sasl, err = n.newSASL(); err != nil {
		return err
	}
	if n.peerSASL, err = n.newPeerSASL(); err != nil {
		return err
	}
	if n.storage, err = n.newStorage(); err != nil {
		return err
	}
	n.watchLogDirs()
	if n.cfg.HasRole("broker") {
		n.broker = n.newBrokerPlane()
	}
	if !n.cfg.SingleNode() {
		n.peers = transport.New(transport.Options{ClientID: fmt.Sprintf("sluice-node-%d", n.cfg.NodeID()), PeerOpts: n.peerOptions})
	}
	if n.meta, err = n.newMetadataPlane(metaDir); err != nil {
		return err
	}
	if n.meta.driver != nil {
		n.ctrl = n.newQuorumController()
	}
	var fwd *broker.ForwardingManager
	if n.peers != nil {
		fwd = n.forwardingManager()
	}
	n.channel = broker.NewControllerChannel(n.ctrl, fwd)
	if n.broker != nil {
		if err := n.buildBroker(); err != nil {
			return err
		}
	}
	if n.meta.driver != nil {
		if err := n.newControllerServer(); err != nil {
			return err
		}
	}
	n.registerControlMetrics()
	n.registerBuildInfo()
	return n.newConsole()
}

// newQuorumController builds a voter's controller: operations, sessions
// and, with other voters, the active controller's duties.
func (n *Node) newQuorumController() *quorumctl.QuorumController {
	opts := quorumctl.Options{
		NodeID: n.cfg.NodeID(),
		Logic: controller.New(controller.Options{
			NumPartitions:            n.cfg.Int(config.NumPartitions),
			DefaultReplicationFactor: int16(n.cfg.Int(config.DefaultReplicationFactor)),
			Configs:                  configPolicy{cfg: n.cfg},
			MaxPartitionsPerBroker:   commitlog.PartitionsWithinFileLimit(),
		}),
		Quorum:              n.meta.driver,
		Image:               n.meta.loader.Image,
		Voters:              voterEndpoints(n.cfg),
		Listener:            n.cfg.ControllerListenerNames()[0],
		ClusterID:           n.clusterID,
		Duties:              !n.cfg.SingleNode(),
		SessionTimeout:      millis(int64(n.cfg.Int(config.BrokerSessionTimeoutMs))),
		AutoLeaderRebalance: n.cfg.Bool(config.AutoLeaderRebalanceEnable),
		RebalanceInterval:   millis(1000 * max(n.cfg.Long(config.LeaderImbalanceCheckIntervalSeconds), 1)),
		Clock:               n.clk,
		Logger:              n.logger,
	}
	if n.broker != nil {
		opts.Published = n.broker.publisher.WaitFor
	}
	return quorumctl.New(opts)
}
