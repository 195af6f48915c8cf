// Package broker holds the broker's side of the cluster: its
// ForwardingManager (requests for the active controller sent to its
// CONTROLLER listener), the ControllerChannel handlers and replication use
// to reach the controller (this node's own when it is the active one), the
// LifecycleManager (registration, heartbeats, controlled shutdown), the
// producer id blocks, and the topic configuration pushed to partitions as
// metadata changes. Kafka's names: ForwardingManager,
// BrokerLifecycleManager, RPCProducerIdManager, DynamicConfigPublisher.
package broker

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/purgatory"
	"github.com/sluice-io/sluice/internal/quorum"
	"github.com/sluice-io/sluice/internal/transport"
)

// ForwardingManager sends requests to the active controller, another node,
// on its CONTROLLER listener.
type ForwardingManager struct {
	view   quorum.View
	voters func() map[int32]string
	peers  *transport.Pool
}

// NewForwardingManager forwards to the leader view names, at its address
// in voters (id -> CONTROLLER host:port), over peers.
func NewForwardingManager(view quorum.View, voters map[int32]string, peers *transport.Pool) *ForwardingManager {
	return &ForwardingManager{view: view, voters: func() map[int32]string { return voters }, peers: peers}
}

// NewDynamicForwardingManager is NewForwardingManager for a dynamic quorum
// (KIP-853), whose voters' addresses change: voters is asked each time.
func NewDynamicForwardingManager(view quorum.View, voters func() map[int32]string, peers *transport.Pool) *ForwardingManager {
	return &ForwardingManager{view: view, voters: voters, peers: peers}
}

// Forward sends req to the active controller and returns its answer at the
// version req was asked in. Every failure to reach it wraps
// controller.ErrNotController, which clients retry.
func (f *ForwardingManager) Forward(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	st := f.view.Status()
	if st.Leader < 0 || st.IsLeader {
		return nil, fmt.Errorf("%w: no other active controller known", controller.ErrNotController)
	}
	addr, ok := f.voters()[st.Leader]
	if !ok {
		return nil, fmt.Errorf("%w: leader %d is not a configured voter", controller.ErrNotController, st.Leader)
	}
	version := req.GetVersion()
	// A controller that stopped answering (SIGSTOP, a cut link) keeps the
	// connection open, so the request would wait out kgo's whole timeout
	// while the quorum has already moved on: it is abandoned as soon as
	// the quorum names another leader, as Kafka's controller channel
	// resends to the new one.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go f.cancelOnLeaderChange(rctx, cancel, st.Leader)
	// The controller's answer is the request's remote time, as Kafka's
	// forwarding completes the request from the controller's callback.
	purgatory.Park(ctx)
	resp, err := f.peers.Request(rctx, addr, req)
	purgatory.Unpark(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: send %s to controller %d at %s: %w", controller.ErrNotController, kmsg.NameForKey(req.Key()), st.Leader, addr, err)
	}
	resp.SetVersion(version)
	return resp, nil
}

// cancelOnLeaderChange calls cancel once the view names another leader; it
// returns when ctx ends.
func (f *ForwardingManager) cancelOnLeaderChange(ctx context.Context, cancel context.CancelFunc, leader int32) {
	for {
		changed := f.view.StatusChanged()
		if f.view.Status().Leader != leader {
			cancel()
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// forward is Forward with the answer's type checked.
func forward[Resp kmsg.Response](ctx context.Context, f *ForwardingManager, req kmsg.Request) (Resp, error) {
	var zero Resp
	resp, err := f.Forward(ctx, req)
	if err != nil {
		return zero, err
	}
	typed, ok := resp.(Resp)
	if !ok {
		return zero, fmt.Errorf("controller answered %s with %T", kmsg.NameForKey(req.Key()), resp)
	}
	return typed, nil
}
