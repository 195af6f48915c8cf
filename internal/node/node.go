// Package node is Sluice's composition root: it builds every component of a
// node from the configuration (log manager, metadata quorum and image,
// controller, replica manager, request handlers, listeners) and runs them
// until stopped. It holds no package-level state, so several nodes can run in
// one process.
package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"sluice/internal/api"
	"sluice/internal/clock"
	"sluice/internal/commitlog"
	"sluice/internal/commitlog/cleaner"
	"sluice/internal/config"
	"sluice/internal/console"
	"sluice/internal/controller"
	"sluice/internal/coordinator/groupcoord"
	"sluice/internal/metadata"
	"sluice/internal/quorum"
	"sluice/internal/replication"
	"sluice/internal/server"
	"sluice/internal/vfs"
)

// shutdownGrace bounds how long in-flight requests may take to finish at
// shutdown before their connections are closed.
const shutdownGrace = 10 * time.Second

// Node is one Sluice process's broker and controller.
type Node struct {
	cfg       *config.Config
	logger    *slog.Logger
	metrics   prometheus.Registerer
	fsys      vfs.FS
	clk       clock.Clock
	clusterID string

	locks    *dirLocks
	mgr      *commitlog.Manager
	cleaner  *cleaner.Cleaner // nil when log.cleaner.enable is false
	logs     *partitionLogs
	store    *quorum.LogEntryStore
	driver   *quorum.Driver
	loader   *metadata.Loader
	ctrl     *controller.Controller
	control  *controlLoop
	replicas *replication.ReplicaManager
	groups   *groupcoord.GroupCoordinator
	registry *api.Registry
	server   *server.Server
	console  *console.Server // nil unless sluice.debug.listener is set

	// fetchTransport carries follower fetches to leaders (multi-node only).
	fetchTransport *replication.KafkaTransport

	// A multi-voter quorum's parts (nil for a single voter): the raft
	// transport, the CONTROLLER listeners' server, the clients that reach
	// the active controller and, on the active controller, the brokers'
	// sessions.
	transport   *quorum.TCPTransport
	ctrlServer  *server.Server
	controllers *controllerClients
	sessions    *controller.Sessions
	broker      clusterBroker
	// prevEpoch is the broker epoch the previous process recorded at a
	// clean stop (register.go).
	prevEpoch previousEpoch
	// refusal is set when the quorum's peers refuse this voter.
	refusal quorumRefusal
	// observer pulls the metadata log of a dedicated broker (nil on a
	// voter); tail keeps a voter's committed entries for observers.
	observer *metadataObserver
	tail     *committedTail
	// snapshots reads a voter's metadata checkpoints (snapshot.go).
	snapshots *checkpointReader
	// dutiesStop ends runClusterDuties; dutiesDone is closed when it has.
	dutiesStop chan struct{}
	dutiesDone chan struct{}

	// followDeltas is set once the replayed image has been applied to the
	// replica manager; from then on each published delta is passed on.
	followDeltas atomic.Bool
	producerIDs  producerIDBlock

	ready     chan struct{}
	closeOnce sync.Once
	closeErr  error
	// driverStarted and managerStarted say which loops Close must stop.
	driverStarted   bool
	managerStarted  context.CancelFunc
	controlStarted  bool
	observerStarted bool
}

// New checks the configuration, locks and formats the log dirs (a
// single-voter combined node formats empty dirs itself), loads the partition
// logs and the metadata log. Nothing runs until Run. registry may be nil.
func New(cfg *config.Config, logger *slog.Logger, registry prometheus.Registerer) (*Node, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if registry == nil {
		registry = prometheus.NewRegistry()
	}
	if !cfg.HasRole("broker") && !cfg.HasRole("controller") {
		return nil, fmt.Errorf("process.roles=%v: a node is a broker, a controller or both", cfg.ProcessRoles())
	}
	n := &Node{cfg: cfg, logger: logger, metrics: registry, fsys: vfs.Default, clk: clock.Real{}, ready: make(chan struct{})}
	if err := n.open(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func (n *Node) open() error {
	metaDir := metadataLogDir(n.cfg)
	dirs := allDirs(n.cfg.LogDirs(), metaDir)
	var err error
	if n.locks, err = lockDirs(dirs); err != nil {
		return err
	}
	if n.clusterID, err = ensureFormatted(n.fsys, dirs, n.cfg.NodeID(), n.cfg.SingleNode()); err != nil {
		return err
	}
	defaults, err := n.cfg.ResolveTopic(nil)
	if err != nil {
		return fmt.Errorf("broker log defaults: %w", err)
	}
	if n.mgr, err = commitlog.NewManager(n.fsys, managerOptions(n.cfg, logOptions(defaults)), n.clk, n.logger.With("component", "logs")); err != nil {
		return fmt.Errorf("load log dirs: %w", err)
	}
	if n.cfg.Bool(config.LogCleanerEnable) {
		if n.cleaner, err = cleaner.New(n.fsys, n.mgr, cleanerOptions(n.cfg), n.clk, n.metrics, n.logger.With("component", "cleaner")); err != nil {
			return fmt.Errorf("log cleaner: %w", err)
		}
	}
	n.loader = metadata.NewLoader(n.logger.With("component", "metadata"), n.onMetadata)
	n.logs = newPartitionLogs(n.cfg, n.fsys, n.mgr, n.loader.Image)
	n.replicas, err = replication.NewReplicaManager(replication.Options{
		BrokerID:    n.cfg.NodeID(),
		FS:          n.fsys,
		Logs:        n.logs,
		TopicConfig: n.logs.dataPlaneConfig,
		Clock:       n.clk,
		Logger:      n.logger,
		Replication: n.replicationOptions(),
	})
	if err != nil {
		return fmt.Errorf("replica manager: %w", err)
	}
	n.ctrl = controller.New(controller.Options{
		NumPartitions:            n.cfg.Int(config.NumPartitions),
		DefaultReplicationFactor: int16(n.cfg.Int(config.DefaultReplicationFactor)),
		Configs:                  configPolicy{cfg: n.cfg},
	})
	if n.groups, err = n.newGroupCoordinator(); err != nil {
		return fmt.Errorf("group coordinator: %w", err)
	}
	if err := n.newConsole(); err != nil {
		return err
	}
	if !n.cfg.HasRole("controller") {
		n.controllers = &controllerClients{n: n}
		n.observer = newMetadataObserver(n.cfg.NodeID(), voterAddrs(n), n.loader, millis(int64(n.cfg.Int(config.ControllerQuorumFetchTimeoutMs))), n.logger)
		return n.newServer()
	}
	if err := n.openQuorum(metaDir); err != nil {
		return err
	}
	if !n.cfg.HasRole("broker") {
		return nil
	}
	return n.newServer()
}

// openQuorum opens a voter's metadata log and builds its raft driver and,
// with other voters, its transport and CONTROLLER listeners.
func (n *Node) openQuorum(metaDir string) error {
	var err error
	metaLogDir := filepath.Join(metaDir, quorum.MetadataPartition().String())
	if n.store, err = quorum.OpenLogEntryStore(n.fsys, metaLogDir, n.clk, n.logger.With("component", "metadata-log")); err != nil {
		return fmt.Errorf("open metadata log: %w", err)
	}
	if !n.cfg.SingleNode() {
		if n.transport, err = n.newTransport(); err != nil {
			return err
		}
		n.controllers = &controllerClients{n: n}
		n.sessions = controller.NewSessions(millis(int64(n.cfg.Int(config.BrokerSessionTimeoutMs))))
		n.tail = newCommittedTail(metadataTailBytes)
	}
	voters := make([]int32, 0, len(n.cfg.Voters()))
	for _, v := range n.cfg.Voters() {
		voters = append(voters, v.ID)
	}
	n.driver, err = quorum.New(quorum.Options{
		NodeID:          n.cfg.NodeID(),
		Voters:          voters,
		ElectionTimeout: millis(int64(n.cfg.Int(config.ControllerQuorumElectionTimeoutMs))),
		FS:              n.fsys,
		Dir:             metaLogDir,
		Store:           n.store,
		Transport:       n.quorumTransport(),
		Apply: func(c quorum.Committed) error {
			if err := n.loader.Apply(c.Offset, c.Epoch, c.Data); err != nil {
				return err
			}
			if n.tail == nil {
				return nil
			}
			return n.tail.add(c.Offset, c.Epoch, c.Data)
		},
		Snapshots: n.snapshotOptions(metaLogDir),
		Logger:    n.logger,
	})
	if err != nil {
		return fmt.Errorf("metadata quorum: %w", err)
	}
	n.control = newControlLoop(n.driver, n.loader.Image)
	if n.transport != nil {
		return n.newControllerServer()
	}
	return nil
}

// newServer builds the request handlers over the node's components and the
// listeners that serve them.
func (n *Node) newServer() error {
	var err error
	n.registry, err = api.NewRegistry(api.Deps{
		Features:     n,
		ClusterID:    n.clusterID,
		NodeID:       n.cfg.NodeID(),
		ControlPlane: n,
		DataPlane: &api.DataPlaneDeps{
			Partitions:             n.replicas,
			FetchSessionCacheSlots: int(n.cfg.Int(config.MaxIncrementalFetchSessionCacheSlots)),
			FetchMaxBytes:          n.cfg.Int(config.FetchMaxBytes),
			Clock:                  n.clk,
		},
		Groups: &api.GroupPlaneDeps{Coordinator: n.groups, Image: n.loader.Image},
	}, api.DescribeQuorumHandler(n), api.ElectLeadersHandler(n))
	if err != nil {
		return fmt.Errorf("request handlers: %w", err)
	}
	n.server, err = server.New(server.Options{
		Listeners:      brokerListeners(n.cfg),
		Registry:       n.registry,
		MaxRequestSize: n.cfg.Int(config.SocketRequestMaxBytes),
		MaxConnections: int(n.cfg.Int(config.MaxConnections)),
		IdleTimeout:    millis(n.cfg.Long(config.ConnectionsMaxIdleMs)),
		Logger:         n.logger.With("component", "server"),
		Metrics:        n.metrics,
	})
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

// onMetadata is the loader's subscriber: it runs on the quorum's loop for
// every published image.
func (n *Node) onMetadata(delta *metadata.Delta, image *metadata.Image) {
	if !n.followDeltas.Load() {
		return
	}
	if err := n.logs.applyConfigChanges(delta); err != nil {
		n.logger.Error("applying topic config changes", "err", err)
	}
	if delta.Base().Offset() < 0 {
		// A snapshot replaced the image: the delta reports nothing
		// removed, so the replicas are rebuilt from the whole image.
		n.replicas.ApplyImage(image)
	} else {
		n.replicas.ApplyDelta(delta, image)
	}
	n.groups.ApplyImage(image)
}

// brokerListeners are the listeners clients use: every listener but the
// controller's. A single voter needs no controller listener, so it is not
// bound until the quorum has other voters to talk to.
func brokerListeners(cfg *config.Config) []server.Listener {
	var out []server.Listener
	for _, l := range cfg.Listeners() {
		if isControllerListener(cfg, l.Name) {
			continue
		}
		out = append(out, server.Listener{Name: l.Name, Address: l.Addr()})
	}
	return out
}

func isControllerListener(cfg *config.Config, name string) bool {
	for _, c := range cfg.ControllerListenerNames() {
		if c == name {
			return true
		}
	}
	return false
}

// Ready is closed once the node serves clients.
func (n *Node) Ready() <-chan struct{} { return n.ready }

// Addr returns the bound address of a listener, or nil.
func (n *Node) Addr(listener string) net.Addr {
	if n.ctrlServer != nil && isControllerListener(n.cfg, listener) {
		return n.ctrlServer.Addr(listener)
	}
	if n.server == nil {
		return nil
	}
	return n.server.Addr(listener)
}

// ClusterID is the cluster id of the log dirs.
func (n *Node) ClusterID() string { return n.clusterID }

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
	n.logger.Info("node started", "node_id", n.cfg.NodeID(), "cluster_id", n.clusterID)
	failure := errors.Join(n.awaitStopOrFailure(ctx), n.refusal.Err())
	n.logger.Info("node stopping")
	return errors.Join(failure, n.Close())
}

// quorumCheckInterval is how often Run looks for a failed quorum driver.
const quorumCheckInterval = 500 * time.Millisecond

// awaitStopOrFailure waits for ctx to end, or for the metadata quorum to
// fail (its log's disk): without it the node could change nothing, so it
// stops, as a Kafka node whose metadata log fails does.
func (n *Node) awaitStopOrFailure(ctx context.Context) error {
	tick := time.NewTicker(quorumCheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := n.quorumErr(); err != nil {
				n.logger.Error("metadata quorum failed; stopping", "err", err)
				return fmt.Errorf("metadata quorum: %w", err)
			}
		}
	}
}

func (n *Node) start(ctx context.Context) error {
	if err := n.startConsole(); err != nil {
		return err
	}
	if n.observer != nil {
		return n.startObserverBroker(ctx)
	}
	if n.transport != nil {
		n.transport.Start(n.driver)
		if err := n.ctrlServer.Start(); err != nil {
			return err
		}
	}
	n.driver.Start()
	n.driverStarted = true
	select {
	case <-n.driver.Replayed():
	case <-ctx.Done():
		return ctx.Err()
	}
	if n.transport == nil {
		if err := n.awaitLeadership(ctx); err != nil {
			return err
		}
	}
	n.control.start()
	n.controlStarted = true
	if n.transport != nil {
		if err := n.awaitClusterReady(ctx); err != nil {
			return err
		}
	} else if err := n.bootstrap(ctx); err != nil {
		return err
	}
	if !n.cfg.HasRole("broker") {
		n.startDuties()
		return nil
	}
	if err := n.startBrokerData(); err != nil {
		return err
	}
	if n.transport != nil {
		return n.startClusterBroker(ctx)
	}
	if !advertisesEphemeralPort(n.cfg) {
		// Registered and unfenced before the first client connects, so
		// no client sees this broker without its partitions' leader.
		if err := n.registerBroker(ctx); err != nil {
			return err
		}
		return n.server.Start()
	}
	// An ephemeral port is known only once bound: clients may connect a
	// moment before the registration that advertises it.
	if err := n.server.Start(); err != nil {
		return err
	}
	return n.registerBroker(ctx)
}

// startBrokerData hands the current image to the replica manager and the
// group coordinator and follows deltas from then on, deletes the logs of
// partitions the image no longer assigns here, and starts the log manager
// tasks and the log cleaner: the broker's data side, before it registers.
func (n *Node) startBrokerData() error {
	im := n.Image()
	n.replicas.ApplyImage(im)
	n.groups.ApplyImage(im)
	n.followDeltas.Store(true)
	if err := n.logs.removeStrayLogs(im, n.cfg.NodeID()); err != nil {
		return err
	}
	mgrCtx, cancel := context.WithCancel(context.Background())
	n.mgr.Start(mgrCtx)
	n.managerStarted = cancel
	if n.cleaner != nil {
		n.cleaner.Start(mgrCtx)
	}
	return nil
}

// advertisesEphemeralPort reports whether a broker listener is advertised
// with port 0, whose real port the registration must take from the bound
// listener.
func advertisesEphemeralPort(cfg *config.Config) bool {
	for _, l := range cfg.AdvertisedListeners() {
		if l.Port == 0 && !isControllerListener(cfg, l.Name) {
			return true
		}
	}
	return false
}

// awaitLeadership waits until this voter leads the quorum: a single voter
// campaigns at once, so this takes one round of its own disk writes.
func (n *Node) awaitLeadership(ctx context.Context) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !n.driver.Status().IsLeader {
		if err := n.driver.Err(); err != nil {
			return fmt.Errorf("metadata quorum: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// bootstrap writes the first records of a new cluster's metadata log (cluster
// id and the pinned release's finalized features) and checks that an
// existing log belongs to the log dirs' cluster.
func (n *Node) bootstrap(ctx context.Context) error {
	if id := n.Image().ClusterID(); id != "" {
		if id != n.clusterID {
			return fmt.Errorf("metadata log holds cluster id %s but meta.properties says %s", id, n.clusterID)
		}
		return nil
	}
	return n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		for _, f := range api.PinnedRelease().Finalized {
			if f.Name == metadata.MetadataVersionFeature {
				recs = append(metadata.BootstrapRecords(n.clusterID, f.Level), recs...)
				continue
			}
			if f.Level > 0 {
				recs = append(recs, &metadata.FeatureLevelRecord{Name: f.Name, Level: f.Level})
			}
		}
		if len(recs) == 0 || im.ClusterID() != "" {
			return nil, errors.New("bootstrap: no metadata.version in the pinned release, or already bootstrapped")
		}
		return recs, nil
	})
}

// Close stops whatever runs and releases the log dirs. Logs are flushed and
// the clean-shutdown marker written, so the next start skips recovery. It is
// safe to call more than once.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.close() })
	return n.closeErr
}

func (n *Node) close() error {
	var errs []error
	// The group coordinator stops first: JoinGroup and SyncGroup requests
	// parked for a rebalance are answered (NOT_COORDINATOR) instead of
	// holding the listeners' drain until its deadline.
	if n.groups != nil {
		n.groups.Close()
	}
	if n.dutiesStop != nil {
		if n.cfg.HasRole("broker") && n.isRegistered() {
			n.controlledShutdown(shutdownGrace / 2)
		}
		close(n.dutiesStop)
		<-n.dutiesDone
	}
	if n.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := n.server.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop listeners: %w", err))
		}
		cancel()
	}
	if n.ctrlServer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := n.ctrlServer.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop controller listeners: %w", err))
		}
		cancel()
	}
	if n.controllers != nil {
		n.controllers.close()
	}
	if n.observer != nil && n.observerStarted {
		n.observer.stop()
	}
	if n.controlStarted {
		n.control.stop()
	}
	if n.driverStarted {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := n.driver.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop metadata quorum: %w", err))
		}
		cancel()
	}
	if n.transport != nil {
		n.transport.Stop()
	}
	if n.replicas != nil {
		n.replicas.Close()
	}
	if n.fetchTransport != nil {
		n.fetchTransport.Close()
	}
	if n.cleaner != nil {
		// Before the logs close: a clean in progress is aborted, never
		// left to swap segments of a closed log.
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := n.cleaner.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop log cleaner: %w", err))
		}
		cancel()
	}
	if n.managerStarted != nil {
		n.managerStarted()
	}
	if n.store != nil {
		if err := n.store.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close metadata log: %w", err))
		}
	}
	if n.mgr != nil {
		if err := n.mgr.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close logs: %w", err))
		}
	}
	if len(errs) == 0 {
		// Everything stopped cleanly: the next process may take over
		// this broker's registration at once.
		if err := n.recordCleanStop(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := n.stopConsole(); err != nil {
		errs = append(errs, err)
	}
	if n.locks != nil {
		n.locks.release()
	}
	return errors.Join(errs...)
}

// hostName is the host a listener without one is advertised with.
func hostName() string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}
