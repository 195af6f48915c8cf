// Package node is Sluice's composition root: it builds a node's components
// from the configuration (storage, the metadata quorum or observer, the
// quorum controller, the broker's data plane and coordinators, the
// listeners), starts them in order and stops them in reverse. Each
// component owns its goroutines; the node holds no package-level state, so
// several nodes can run in one process.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	kgosasl "github.com/twmb/franz-go/pkg/sasl"

	"github.com/sluice-io/sluice/internal/auth/tlsconf"
	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/logdir"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/console"
	"github.com/sluice-io/sluice/internal/controller/quorumctl"
	"github.com/sluice-io/sluice/internal/logging"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/server"
	"github.com/sluice-io/sluice/internal/transport"
	"github.com/sluice-io/sluice/internal/vfs"
)

// shutdownGrace bounds how long in-flight requests may take to finish at
// shutdown before their connections are closed.
const shutdownGrace = 10 * time.Second

// Node is one Sluice process's broker and controller.
type Node struct {
	cfg     *config.Config
	logger  *slog.Logger
	metrics prometheus.Registerer
	// history holds only the collectors whose series the web console
	// samples every 10 s, so its sampler does not walk every partition's
	// Log gauges and the request histograms.
	history   *prometheus.Registry
	fsys      vfs.FS
	clk       clock.Clock
	clusterID string

	locks   *logdir.Locks
	storage *storage
	meta    *metadataPlane
	// ctrl runs controller operations on a voter (nil on a dedicated
	// broker); channel reaches the active controller from anywhere.
	ctrl    *quorumctl.QuorumController
	channel *broker.ControllerChannel
	// peers holds the clients to other nodes (nil on a single node).
	peers *transport.Pool
	// tls is the TLS of each SSL listener the node serves or reaches.
	tls map[string]*tlsconf.Store
	// sasl authenticates each SASL listener's connections; peerSASL is
	// the mechanism the node's own clients use on the inter-broker and
	// controller listeners when they are SASL.
	sasl     map[string]*server.SASL
	peerSASL map[string]kgosasl.Mechanism
	// broker is the data plane and coordinators (nil on a dedicated
	// controller); ctrlServer serves the CONTROLLER listeners of a quorum
	// of several voters (nil otherwise).
	broker     *brokerPlane
	ctrlServer *server.Server
	console    *console.Server // nil unless sluice.debug.listener is set
	refusal    quorumRefusal
	// hwCheckpoints writes replication-offset-checkpoint (hwcheckpoint.go).
	hwCheckpoints *hwCheckpointer

	embedding // options only an embedding sets (embed.go)

	ready     chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// New checks the configuration, locks and formats the log dirs (a
// single-voter combined node formats empty dirs itself), loads the partition
// logs and the metadata log and builds every component. Nothing runs until
// Run. registry may be nil; opts are an embedding's (embed.go).
func New(cfg *config.Config, logger *slog.Logger, registry prometheus.Registerer, opts ...Option) (*Node, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger, _ = logging.Adopt(logger) // levels change at run time (BROKER_LOGGER)
	if registry == nil {
		registry = prometheus.NewRegistry()
	}
	if !cfg.HasRole("broker") && !cfg.HasRole("controller") {
		return nil, fmt.Errorf("process.roles=%v: a node is a broker, a controller or both", cfg.ProcessRoles())
	}
	n := &Node{cfg: cfg, logger: logger, metrics: listCollectors(registry), history: prometheus.NewRegistry(), fsys: vfs.Default, clk: clock.Real{}, ready: make(chan struct{})}
	for _, o := range opts {
		o(n)
	}
	if err := n.build(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

// Ready is closed once the node serves clients.
func (n *Node) Ready() <-chan struct{} { return n.ready }

// Addr returns the bound address of a listener, or nil.
func (n *Node) Addr(listener string) net.Addr {
	if n.ctrlServer != nil && isControllerListener(n.cfg, listener) {
		return n.ctrlServer.Addr(listener)
	}
	if n.broker == nil || n.broker.server == nil {
		return nil
	}
	return n.broker.server.Addr(listener)
}

// ClusterID is the cluster id of the log dirs.
func (n *Node) ClusterID() string { return n.clusterID }

// Image is the node's latest metadata image: on a broker the one its
// handlers answer from (every subscriber has it), on a dedicated
// controller the applied one.
func (n *Node) Image() *metadata.Image {
	if n.broker != nil {
		return n.broker.publisher.Image()
	}
	return n.meta.loader.Image()
}

// IsActiveController reports whether this node leads the metadata quorum.
func (n *Node) IsActiveController() bool { return n.meta.view.Status().IsLeader }

// QuorumStatus is this node's view of the metadata quorum.
func (n *Node) QuorumStatus() quorum.Status { return n.meta.view.Status() }

// Run starts the node, serves until ctx ends and then stops it cleanly:
// listeners first (in-flight requests finish), then the controller, the
// replica manager, the quorum and the logs, which are flushed and marked
// cleanly shut down. It returns the first error of the start or the stop.
func (n *Node) Run(ctx context.Context) error {
	ctx, release := n.refusal.bind(ctx)
	defer release()
	if err := n.start(ctx); err != nil {
		if refused := n.refusal.Err(); refused != nil {
			return errors.Join(refused, n.Close())
		}
		if ctx.Err() != nil {
			// Stopped while starting: a stop, not a failure.
			return n.Close()
		}
		return errors.Join(err, n.Close())
	}
	close(n.ready)
	n.logStarted()
	failure := errors.Join(n.awaitStopOrFailure(ctx), n.refusal.Err())
	n.logger.Info("node stopping", "node_id", n.cfg.NodeID())
	if err := n.Close(); err != nil {
		n.logger.Error("shut down with errors", "node_id", n.cfg.NodeID(), "err", err)
		return errors.Join(failure, err)
	}
	// Kafka's last line of a graceful stop.
	n.logger.Info("shut down completed", "node_id", n.cfg.NodeID())
	return failure
}

// awaitStopOrFailure waits for ctx to end, or for the metadata quorum (or
// observer) to fail: without it the node could change nothing, so it
// stops, as a Kafka node whose metadata log fails does.
func (n *Node) awaitStopOrFailure(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-n.meta.view.Done():
		err := n.meta.view.Err()
		n.logger.Error("metadata quorum failed; stopping", "err", err)
		return fmt.Errorf("metadata quorum: %w", err)
	}
}

// Close stops whatever runs and releases the log dirs. Logs are flushed and
// the clean-shutdown marker written, so the next start skips recovery. It is
// safe to call more than once, and after a failed start.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.close() })
	return n.closeErr
}

// close stops the components in the reverse of their start. Every
// component's stop is safe when it never started.
func (n *Node) close() error {
	var errs []error
	add := func(what string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
		}
	}
	if n.broker != nil {
		add("stop listeners", n.broker.stopServing(n.abrupt.Load()))
	}
	add("stop controller listeners", shutdownServer(n.ctrlServer))
	if n.meta != nil {
		n.meta.stopObserver()
	}
	if n.ctrl != nil {
		n.ctrl.Stop()
	}
	if n.meta != nil {
		add("stop metadata quorum", n.meta.stopQuorum())
	}
	if n.broker != nil {
		n.broker.close()
	}
	add("checkpoint high watermarks", n.stopHighWatermarkCheckpoints())
	if n.peers != nil {
		n.peers.Close()
	}
	if n.storage != nil {
		add("close logs", n.storage.close())
	}
	if len(errs) == 0 && n.broker != nil && n.broker.lifecycle != nil {
		// Everything stopped cleanly: the next process may take over
		// this broker's registration at once.
		add("record clean stop", n.broker.lifecycle.RecordCleanStop())
	}
	add("stop console", n.stopConsole())
	if n.locks != nil {
		n.locks.Release()
	}
	return errors.Join(errs...)
}

// shutdownServer stops accepting, lets each connection finish its request
// and force-closes what is left after shutdownGrace.
func shutdownServer(s *server.Server) error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	return s.Shutdown(ctx)
}
