package broker

// The broker's lifecycle with the active controller, as Kafka's
// BrokerLifecycleManager: register (naming the epoch a clean stop
// recorded, KIP-966), heartbeat until unfenced and then every
// broker.heartbeat.interval.ms, register again when the controller lost
// the registration, and ask for a controlled shutdown before stopping. A
// single node registers through its own controller and sends no
// heartbeats.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/vfs"
)

// Registrar is what registration needs of the controller.
type Registrar interface {
	BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (*kmsg.BrokerRegistrationResponse, error)
	BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) (*kmsg.BrokerHeartbeatResponse, error)
}

// LifecycleOptions configure a LifecycleManager.
type LifecycleOptions struct {
	NodeID    int32
	ClusterID string
	// Controller receives registrations and heartbeats.
	Controller Registrar
	// Sole, on a single node, registers and unfences the broker through
	// its own controller in one step (no heartbeats follow); nil on a
	// cluster.
	Sole func(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (int64, error)
	// Listeners are the advertised broker listeners, asked at registration
	// time (an ephemeral port is known once bound).
	Listeners func() []kmsg.BrokerRegistrationRequestListener
	// Rack is broker.rack ("" for none).
	Rack string
	// MetadataOffset is the offset of the metadata this broker has
	// published: the controller unfences it once that reaches its
	// registration.
	MetadataOffset func() int64
	// HeartbeatInterval and RequestTimeout are broker.heartbeat.interval.ms
	// and controller.quorum.request.timeout.ms.
	HeartbeatInterval time.Duration
	RequestTimeout    time.Duration
	// LogDirs, when set, are the ids of the broker's online and offline
	// log dirs (KIP-858): registrations list the online ones, heartbeats
	// name the offline ones.
	LogDirs func() (online, offline [][16]byte)
	// AssignDirs, when set, runs after each successful heartbeat: it tells
	// the controller where replicas are placed (AssignReplicasToDirs).
	AssignDirs func(ctx context.Context, epoch int64)
	// FS and Dir locate the file keeping the epoch of a clean stop (the
	// metadata log dir).
	FS     vfs.FS
	Dir    string
	Clock  clock.Clock
	Logger *slog.Logger
}

// LifecycleManager registers the broker and keeps its session.
type LifecycleManager struct {
	opts LifecycleOptions
	log  *slog.Logger
	prev previousEpoch

	mu         sync.Mutex
	registered bool
	epoch      int64
	// fenced is the controller's last word on this broker.
	fenced bool

	stopc chan struct{}
	donec chan struct{} // nil until Start
}

// NewLifecycleManager returns an unregistered broker's manager.
func NewLifecycleManager(opts LifecycleOptions) *LifecycleManager {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &LifecycleManager{opts: opts, log: opts.Logger.With("component", "broker-lifecycle"), epoch: -1, fenced: true, stopc: make(chan struct{})}
}

// Epoch is the broker epoch of the registration, -1 before it.
func (m *LifecycleManager) Epoch() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.epoch
}

// Registered reports whether the broker has registered once.
func (m *LifecycleManager) Registered() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.registered
}

// Register registers the broker and returns once it is unfenced (or ctx
// ends). A single node registers through its controller at once.
func (m *LifecycleManager) Register(ctx context.Context) error {
	req, err := m.registrationRequest()
	if err != nil {
		return err
	}
	m.addLogDirs(req)
	if m.opts.Sole != nil {
		epoch, err := m.opts.Sole(ctx, req)
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.registered, m.epoch, m.fenced = true, epoch, false
		m.mu.Unlock()
		return nil
	}
	if err := m.registerRemote(ctx, req); err != nil {
		return err
	}
	return m.awaitUnfenced(ctx)
}

// registerRemote registers with the active controller, retrying through
// leader changes and through a previous incarnation's session still
// running.
func (m *LifecycleManager) registerRemote(ctx context.Context, req *kmsg.BrokerRegistrationRequest) error {
	retry := m.opts.Clock.NewTicker(200 * time.Millisecond)
	defer retry.Stop()
	lastRefusal := int16(0) // logged once per refusal code, not per retry
	for {
		resp, err := m.opts.Controller.BrokerRegistration(ctx, req)
		switch {
		case err == nil && resp.ErrorCode == 0:
			m.mu.Lock()
			m.registered, m.epoch, m.fenced = true, resp.BrokerEpoch, true
			m.mu.Unlock()
			m.log.Info("broker registered", "broker_epoch", resp.BrokerEpoch)
			return nil
		case err == nil && resp.ErrorCode != lastRefusal:
			lastRefusal = resp.ErrorCode
			m.log.Info("broker registration refused; retrying", "err", kerr.ErrorForCode(resp.ErrorCode))
		case err == nil:
			// The same refusal again: already logged.
		default:
			m.log.Debug("broker registration failed; retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("register broker %d: %w", m.opts.NodeID, ctx.Err())
		case <-retry.C():
		}
	}
}

// awaitUnfenced heartbeats until the controller unfences this broker.
func (m *LifecycleManager) awaitUnfenced(ctx context.Context) error {
	retry := m.opts.Clock.NewTicker(100 * time.Millisecond)
	defer retry.Stop()
	for {
		fenced, err := m.heartbeat(ctx, false)
		if err == nil && !fenced {
			return nil
		}
		if err != nil {
			m.log.Debug("heartbeat failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("await unfencing of broker %d: %w", m.opts.NodeID, ctx.Err())
		case <-retry.C():
		}
	}
}

// errReregister says the controller no longer knows this registration.
var errReregister = errors.New("broker registration lost")

// heartbeat sends one heartbeat, bounded by the request timeout, and
// reports whether the broker is fenced.
func (m *LifecycleManager) heartbeat(ctx context.Context, shutdown bool) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, m.opts.RequestTimeout)
	defer cancel()
	req := kmsg.NewPtrBrokerHeartbeatRequest()
	req.BrokerID, req.BrokerEpoch = m.opts.NodeID, m.Epoch()
	req.CurrentMetadataOffset = m.opts.MetadataOffset()
	req.WantShutdown = shutdown
	if m.opts.LogDirs != nil {
		_, req.OfflineLogDirs = m.opts.LogDirs()
	}
	resp, err := m.opts.Controller.BrokerHeartbeat(ctx, req)
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
	m.mu.Lock()
	m.fenced = resp.IsFenced
	m.mu.Unlock()
	return resp.IsFenced, nil
}

// Start sends heartbeats every HeartbeatInterval until Stop (not on a
// single node).
func (m *LifecycleManager) Start() {
	if m.opts.Sole != nil || m.donec != nil {
		return
	}
	m.donec = make(chan struct{})
	go func() {
		defer close(m.donec)
		m.runHeartbeats()
	}()
}

func (m *LifecycleManager) runHeartbeats() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-m.stopc
		cancel()
	}()
	hb := m.opts.Clock.NewTicker(m.opts.HeartbeatInterval)
	defer hb.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hb.C():
		}
		if !m.Registered() {
			continue
		}
		_, err := m.heartbeat(ctx, false)
		if errors.Is(err, errReregister) {
			m.log.Warn("controller lost this broker's registration; registering again", "err", err)
			if err := m.reregister(ctx); err != nil && ctx.Err() == nil {
				m.log.Error("registering again failed", "err", err)
			}
		} else if err != nil && ctx.Err() == nil {
			m.log.Debug("heartbeat failed", "err", err)
		} else if err == nil && m.opts.AssignDirs != nil {
			m.opts.AssignDirs(ctx, m.Epoch())
		}
	}
}

// addLogDirs lists the online log dirs' ids in a registration.
func (m *LifecycleManager) addLogDirs(req *kmsg.BrokerRegistrationRequest) {
	if m.opts.LogDirs != nil {
		req.LogDirs, _ = m.opts.LogDirs()
	}
}

func (m *LifecycleManager) reregister(ctx context.Context) error {
	req, err := m.registrationRequest()
	if err != nil {
		return err
	}
	m.addLogDirs(req)
	if err := m.registerRemote(ctx, req); err != nil {
		return err
	}
	return m.awaitUnfenced(ctx)
}

// ControlledShutdown asks the active controller to move this broker's
// leadership away before it stops (bounded by timeout); a broker never
// registered, or a single node, has nothing to ask.
func (m *LifecycleManager) ControlledShutdown(timeout time.Duration) {
	if m.opts.Sole != nil || !m.Registered() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if _, err := m.heartbeat(ctx, true); err != nil {
		m.log.Warn("controlled shutdown failed; stopping anyway", "err", err)
	}
}

// Stop ends the heartbeats and waits for them.
func (m *LifecycleManager) Stop() {
	select {
	case <-m.stopc:
	default:
		close(m.stopc)
	}
	if m.donec != nil {
		<-m.donec
	}
}
