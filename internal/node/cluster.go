package node

// A node of a multi-voter quorum: the raft transport shares the CONTROLLER
// listener with the controller API set; the broker registers and heartbeats
// with the active controller over that API (remote or this node), and the
// active controller fences brokers whose sessions expire. Requests that
// change metadata go to the active controller; a node that is not it
// forwards them there, as a KRaft broker does.

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/config"
	"sluice/internal/controller"
	"sluice/internal/metadata"
	"sluice/internal/quorum"
	"sluice/internal/server"
)

// voterAddrs maps each voter's id to its CONTROLLER address.
func voterAddrs(n *Node) map[int32]string {
	out := map[int32]string{}
	for _, v := range n.cfg.Voters() {
		out[v.ID] = v.Addr()
	}
	return out
}

// newTransport builds the raft transport of a multi-voter quorum.
func (n *Node) newTransport() (*quorum.TCPTransport, error) {
	t, err := quorum.NewTCPTransport(quorum.TCPOptions{
		ClusterID: n.clusterID,
		NodeID:    n.cfg.NodeID(),
		Voters:    voterAddrs(n),
		OnRefused: n.refusal.report,
		Logger:    n.logger,
	})
	if err != nil {
		return nil, fmt.Errorf("raft transport: %w", err)
	}
	return t, nil
}

// newControllerServer serves the CONTROLLER listeners: the controller API
// set, with raft connections diverted to the transport.
func (n *Node) newControllerServer() error {
	rel := api.WithFetchSnapshot(api.WithAlterPartition(api.ControllerRelease()))
	registry, err := api.NewRegistry(api.Deps{
		Release:      &rel,
		Features:     n,
		ClusterID:    n.clusterID,
		NodeID:       n.cfg.NodeID(),
		ControlPlane: n,
	}, append(api.ControllerHandlers(n, n), api.DescribeQuorumHandler(controllerQuorum{n}), api.ElectLeadersHandler(n), api.AlterPartitionHandler(n), api.FetchSnapshotHandler(n))...)
	if err != nil {
		return fmt.Errorf("controller request handlers: %w", err)
	}
	divert := &server.Divert{PrefixLen: 8, Match: quorum.IsRPCPrefix, Serve: n.transport.ServeConn}
	var listeners []server.Listener
	for _, l := range n.cfg.Listeners() {
		if isControllerListener(n.cfg, l.Name) {
			listeners = append(listeners, server.Listener{Name: l.Name, Address: l.Addr(), Registry: registry, Divert: divert})
		}
	}
	if len(listeners) == 0 {
		return fmt.Errorf("no listener named in controller.listener.names %v: a controller of a multi-voter quorum needs one", n.cfg.ControllerListenerNames())
	}
	n.ctrlServer, err = server.New(server.Options{
		Listeners:      listeners,
		Registry:       registry,
		MaxRequestSize: n.cfg.Int(config.SocketRequestMaxBytes),
		IdleTimeout:    millis(n.cfg.Long(config.ConnectionsMaxIdleMs)),
		Logger:         n.logger.With("component", "controller-server"),
		Metrics:        controllerMetrics(n.metrics),
	})
	if err != nil {
		return fmt.Errorf("controller server: %w", err)
	}
	return nil
}

// awaitClusterReady waits until the quorum has a leader and the metadata
// log has been bootstrapped; the leader bootstraps it.
func (n *Node) awaitClusterReady(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for n.Image().ClusterID() == "" {
		if err := n.driver.Err(); err != nil {
			return fmt.Errorf("metadata quorum: %w", err)
		}
		if n.driver.Status().IsLeader {
			if err := n.bootstrap(ctx); err != nil && !errors.Is(err, api.ErrNotController) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return n.bootstrap(ctx)
}

// controllerClients sends controller requests to the active controller's
// CONTROLLER listener, one client per voter address.
type controllerClients struct {
	n  *Node
	mu sync.Mutex
	cl map[string]*kgo.Client
}

// request sends req to the active controller, which must be another node.
func (c *controllerClients) request(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	st := c.n.quorumStatus()
	if st.Leader < 0 || st.IsLeader {
		return nil, fmt.Errorf("%w: no other active controller known", api.ErrNotController)
	}
	addr, ok := voterAddrs(c.n)[st.Leader]
	if !ok {
		return nil, fmt.Errorf("%w: leader %d is not a configured voter", api.ErrNotController, st.Leader)
	}
	cl, err := c.client(addr)
	if err != nil {
		return nil, err
	}
	version := req.GetVersion()
	// A controller that stopped answering (SIGSTOP, a cut link) keeps the
	// connection open, so the request would wait out kgo's whole timeout
	// while the quorum has already moved on: it is abandoned as soon as
	// the quorum names another leader, as Kafka's controller channel
	// resends to the new one.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWatch := c.cancelOnLeaderChange(rctx, cancel, st.Leader)
	resp, err := cl.SeedBrokers()[0].Request(rctx, req)
	stopWatch()
	req.SetVersion(version)
	if err != nil {
		return nil, fmt.Errorf("%w: send %s to controller %d at %s: %w", api.ErrNotController, kmsg.NameForKey(req.Key()), st.Leader, addr, err)
	}
	resp.SetVersion(version)
	return resp, nil
}

// cancelOnLeaderChange calls cancel once the quorum's leader is no longer
// leader; the returned func stops the watch.
func (c *controllerClients) cancelOnLeaderChange(ctx context.Context, cancel context.CancelFunc, leader int32) func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(leaderWatchInterval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				if c.n.quorumStatus().Leader != leader {
					cancel()
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// leaderWatchInterval is how often a request in flight to the active
// controller checks that the quorum still names it.
const leaderWatchInterval = 50 * time.Millisecond

func (c *controllerClients) client(addr string) (*kgo.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.cl[addr]; ok {
		return cl, nil
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ClientID(fmt.Sprintf("sluice-node-%d", c.n.cfg.NodeID())))
	if err != nil {
		return nil, fmt.Errorf("controller client for %s: %w", addr, err)
	}
	if c.cl == nil {
		c.cl = map[string]*kgo.Client{}
	}
	c.cl[addr] = cl
	return cl, nil
}

func (c *controllerClients) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, cl := range c.cl {
		cl.Close()
		delete(c.cl, addr)
	}
}

// forwardOr runs local when this node is the active controller (or the only
// voter) and otherwise forwards req to the active controller.
func forwardOr[Resp kmsg.Response](ctx context.Context, n *Node, req kmsg.Request, local func() (Resp, error)) (Resp, error) {
	if n.cfg.SingleNode() || n.quorumStatus().IsLeader {
		return local()
	}
	var zero Resp
	resp, err := n.controllers.request(ctx, req)
	if err != nil {
		return zero, err
	}
	typed, ok := resp.(Resp)
	if !ok {
		return zero, fmt.Errorf("controller answered %s with %T", kmsg.NameForKey(req.Key()), resp)
	}
	return typed, nil
}

// BrokerRegistration implements api.ControllerPlane.
func (n *Node) BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (*kmsg.BrokerRegistrationResponse, error) {
	if !n.quorumStatus().IsLeader {
		return nil, api.ErrNotController
	}
	var resp *kmsg.BrokerRegistrationResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.RegisterBroker(im, req)
		return recs, nil
	})
	if err == nil && resp.ErrorCode == 0 {
		n.sessions.Heard(req.BrokerID, n.clk.Now(), -1)
	}
	return resp, err
}

// BrokerHeartbeat implements api.ControllerPlane.
func (n *Node) BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) (*kmsg.BrokerHeartbeatResponse, error) {
	if !n.quorumStatus().IsLeader {
		return nil, api.ErrNotController
	}
	var resp *kmsg.BrokerHeartbeatResponse
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		var recs []metadata.Record
		recs, resp = n.ctrl.BrokerHeartbeat(im, req)
		return recs, nil
	})
	if err == nil && resp.ErrorCode == 0 {
		n.sessions.Heard(req.BrokerID, n.clk.Now(), req.CurrentMetadataOffset)
	}
	return resp, err
}

// clusterBroker is the broker side of a multi-voter node: its registration
// and the heartbeats that keep it.
type clusterBroker struct {
	mu         sync.Mutex
	registered bool
	epoch      int64
	// fenced is the controller's last word on this broker.
	fenced bool
}

// registerRemote registers this broker with the active controller and
// heartbeats until it is unfenced, retrying through leader changes and
// through a previous incarnation's session still running.
func (n *Node) registerRemote(ctx context.Context) error {
	req, err := n.registrationRequest()
	if err != nil {
		return err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	lastRefusal := int16(0) // logged once per refusal code, not per retry
	for {
		resp, err := forwardOr(ctx, n, req, func() (*kmsg.BrokerRegistrationResponse, error) { return n.BrokerRegistration(ctx, req) })
		switch {
		case err == nil && resp.ErrorCode == 0:
			n.broker.mu.Lock()
			n.broker.registered, n.broker.epoch, n.broker.fenced = true, resp.BrokerEpoch, true
			n.broker.mu.Unlock()
			n.logger.Info("broker registered", "broker_epoch", resp.BrokerEpoch)
			return n.awaitUnfenced(ctx)
		case err == nil && resp.ErrorCode != lastRefusal:
			lastRefusal = resp.ErrorCode
			n.logger.Info("broker registration refused; retrying", "err", kerr.ErrorForCode(resp.ErrorCode))
		case err == nil:
			// The same refusal again: already logged.
		default:
			n.logger.Debug("broker registration failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("register broker %d: %w", n.cfg.NodeID(), ctx.Err())
		case <-tick.C:
		}
	}
}

// awaitUnfenced heartbeats until the controller unfences this broker.
func (n *Node) awaitUnfenced(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		fenced, err := n.heartbeat(ctx, false)
		if err == nil && !fenced {
			return nil
		}
		if err != nil {
			n.logger.Debug("heartbeat failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("await unfencing of broker %d: %w", n.cfg.NodeID(), ctx.Err())
		case <-tick.C:
		}
	}
}

// errReregister says the controller no longer knows this registration.
var errReregister = errors.New("broker registration lost")

// heartbeat sends one heartbeat, bounded by
// controller.quorum.request.timeout.ms, and reports whether the broker is
// fenced.
func (n *Node) heartbeat(ctx context.Context, shutdown bool) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, millis(int64(n.cfg.Int(config.ControllerQuorumRequestTimeoutMs))))
	defer cancel()
	n.broker.mu.Lock()
	epoch := n.broker.epoch
	n.broker.mu.Unlock()
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID, req.BrokerEpoch = n.cfg.NodeID(), epoch
	req.CurrentMetadataOffset = n.Image().Offset()
	req.WantShutdown = shutdown
	resp, err := forwardOr(ctx, n, req, func() (*kmsg.BrokerHeartbeatResponse, error) { return n.BrokerHeartbeat(ctx, req) })
	if err != nil {
		return true, err
	}
	switch resp.ErrorCode {
	case 0:
	case kerr.StaleBrokerEpoch.Code, kerr.BrokerIDNotRegistered.Code:
		return true, fmt.Errorf("%w: %w", errReregister, kerr.ErrorForCode(resp.ErrorCode))
	default:
		return true, kerr.ErrorForCode(resp.ErrorCode)
	}
	n.broker.mu.Lock()
	n.broker.fenced = resp.IsFenced
	n.broker.mu.Unlock()
	return resp.IsFenced, nil
}

// runClusterDuties heartbeats this broker and, while this node is the
// active controller, fences brokers whose sessions expired. The two run
// apart: a heartbeat stuck on an unresponsive old controller must not hold
// up the fencing this node owes as the new one. It returns when stop is
// closed.
func (n *Node) runClusterDuties(stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var heartbeats sync.WaitGroup
	heartbeats.Add(1)
	go func() {
		defer heartbeats.Done()
		n.runHeartbeats(ctx)
	}()
	defer heartbeats.Wait()
	defer cancel()
	check := time.NewTicker(250 * time.Millisecond)
	defer check.Stop()
	rebalance := time.NewTicker(time.Duration(max(n.cfg.Long(config.LeaderImbalanceCheckIntervalSeconds), 1)) * time.Second)
	defer rebalance.Stop()
	wasLeader := false
	for {
		select {
		case <-stop:
			return
		case <-rebalance.C:
			if n.cfg.Bool(config.AutoLeaderRebalanceEnable) && n.quorumStatus().IsLeader {
				n.rebalanceLeaders(ctx)
			}
		case <-check.C:
			st := n.quorumStatus()
			isLeader := st.IsLeader
			if isLeader && !wasLeader {
				n.sessions.Reset(n.clk.Now())
				n.logger.Info("became the active controller", "epoch", st.Epoch)
			}
			wasLeader = isLeader
			if isLeader {
				n.fenceExpired(ctx)
			}
		}
	}
}

// runHeartbeats sends this broker's heartbeat every
// broker.heartbeat.interval.ms until ctx ends.
func (n *Node) runHeartbeats(ctx context.Context) {
	interval := millis(int64(n.cfg.Int(config.BrokerHeartbeatIntervalMs)))
	hb := time.NewTicker(interval)
	defer hb.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hb.C:
		}
		if !n.cfg.HasRole("broker") || !n.isRegistered() {
			continue
		}
		_, err := n.heartbeat(ctx, false)
		if errors.Is(err, errReregister) {
			n.logger.Warn("controller lost this broker's registration; registering again", "err", err)
			if err := n.registerRemote(ctx); err != nil && ctx.Err() == nil {
				n.logger.Error("registering again failed", "err", err)
			}
		} else if err != nil && ctx.Err() == nil {
			n.logger.Debug("heartbeat failed", "err", err)
		}
	}
}

// fenceExpired fences every broker whose session expired.
func (n *Node) fenceExpired(ctx context.Context) {
	for _, id := range n.sessions.Expired(n.Image(), n.clk.Now()) {
		err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
			return controller.FenceBroker(im, id), nil
		})
		if err != nil {
			n.logger.Warn("fencing a broker whose session expired failed", "broker", id, "err", err)
			continue
		}
		n.logger.Info("fenced a broker whose session expired", "broker", id)
	}
}

// controlledShutdown asks the active controller to move this broker's
// leadership away before it stops (bounded by timeout).
func (n *Node) controlledShutdown(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := n.heartbeat(ctx, true); err != nil {
		n.logger.Warn("controlled shutdown failed; stopping anyway", "err", err)
	}
}

// controllerMetrics keeps the controller server's series apart from the
// broker server's on the node's registry.
func controllerMetrics(reg prometheus.Registerer) prometheus.Registerer {
	return prometheus.WrapRegistererWithPrefix("controller_", reg)
}

// quorumTransport is the driver's transport: nil for a single voter.
func (n *Node) quorumTransport() quorum.Transport {
	if n.transport == nil {
		return nil
	}
	return n.transport
}

// startClusterBroker binds the broker listeners, registers with the active
// controller, waits to be unfenced and starts the heartbeats, then serves
// clients. Listeners are bound first (an ephemeral port is advertised as
// bound) but accept only once unfenced: the controller unfences a broker
// whose metadata has reached its own registration, so until then its image
// may be one from before its restart, naming it leader of partitions long
// led elsewhere, and Kafka too enables request processing only then.
func (n *Node) startClusterBroker(ctx context.Context) error {
	if err := n.server.Bind(); err != nil {
		return err
	}
	// Duties first: this node may be the active controller that must fence
	// its own previous registration (left live by a stop without quorum)
	// before it can register again.
	n.startDuties()
	if err := n.registerRemote(ctx); err != nil {
		return err
	}
	n.server.Serve()
	return nil
}

// isRegistered reports whether this broker has registered once.
func (n *Node) isRegistered() bool {
	n.broker.mu.Lock()
	defer n.broker.mu.Unlock()
	return n.broker.registered
}

// startDuties starts runClusterDuties; Close stops it.
func (n *Node) startDuties() {
	n.dutiesStop, n.dutiesDone = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(n.dutiesDone)
		n.runClusterDuties(n.dutiesStop)
	}()
}

// startObserverBroker starts a dedicated broker: it pulls the metadata log
// until caught up, then starts serving as startClusterBroker does.
func (n *Node) startObserverBroker(ctx context.Context) error {
	n.observer.start()
	n.observerStarted = true
	select {
	case <-n.observer.CaughtUp():
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := n.awaitClusterID(ctx); err != nil {
		return err
	}
	if err := n.startBrokerData(); err != nil {
		return err
	}
	return n.startClusterBroker(ctx)
}

// awaitClusterID waits until the metadata image names the cluster and
// checks it is the log dirs' cluster.
func (n *Node) awaitClusterID(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for n.Image().ClusterID() == "" {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	if id := n.Image().ClusterID(); id != n.clusterID {
		return fmt.Errorf("the controllers' metadata log holds cluster id %s but meta.properties says %s", id, n.clusterID)
	}
	return nil
}

// quorumStatus is the quorum as this node sees it: its voter's status, or a
// dedicated broker's observer's.
func (n *Node) quorumStatus() quorum.Status {
	if n.observer != nil {
		return n.observer.Status()
	}
	return n.driver.Status()
}

// quorumErr is the error that stopped the voter or the observer, or nil.
func (n *Node) quorumErr() error {
	if n.observer != nil {
		return n.observer.Err()
	}
	return n.driver.Err()
}

// sortedVoterIDs are the voters' ids in order.
func sortedVoterIDs(voters map[int32]string) []int32 {
	return slices.Sorted(maps.Keys(voters))
}

// IsActiveController reports whether this node leads the metadata quorum.
func (n *Node) IsActiveController() bool { return n.quorumStatus().IsLeader }

// QuorumStatus is this voter's view of the metadata quorum.
func (n *Node) QuorumStatus() quorum.Status { return n.quorumStatus() }

// ElectLeaders implements api.LeaderElector.
func (n *Node) ElectLeaders(ctx context.Context, req *kmsg.ElectLeadersRequest) (*kmsg.ElectLeadersResponse, error) {
	return forwardOr(ctx, n, req, func() (*kmsg.ElectLeadersResponse, error) {
		var resp *kmsg.ElectLeadersResponse
		err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
			var recs []metadata.Record
			recs, resp = n.ctrl.ElectLeaders(im, req)
			return recs, nil
		})
		return resp, err
	})
}

// rebalanceLeaders runs the automatic preferred-leader rebalance once.
func (n *Node) rebalanceLeaders(ctx context.Context) {
	err := n.control.submit(ctx, func(im *metadata.Image) ([]metadata.Record, error) {
		return controller.RebalanceLeaders(im), nil
	})
	if err != nil && ctx.Err() == nil {
		n.logger.Warn("automatic leader rebalance failed", "err", err)
	}
}
