package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/quorum"
)

// dynamicQuorum is a controller's part in a dynamic quorum (KIP-853,
// controller.quorum.bootstrap.servers without controller.quorum.voters):
// its metadata directory id (its voter key with node.id), the voters storage
// format gave it, and the voters' CONTROLLER addresses as the applied
// membership names them.
type dynamicQuorum struct {
	dirID      kafka.UUID
	boot       quorum.BootstrapVoters
	listener   string
	advertised string

	mu    sync.RWMutex
	addrs map[int32]string
}

// isDynamicQuorum: a controller whose voters live in the log.
func isDynamicQuorum(cfg *config.Config) bool {
	return cfg.HasRole(config.RoleController) && len(cfg.Voters()) == 0
}

// openDynamicQuorum reads a dynamic controller's directory id and
// bootstrap voters (partitionDir is its __cluster_metadata-0); nil for a
// static quorum. A directory formatted without bootstrap-voters.json joins
// an existing quorum, as one formatted with --no-initial-controllers.
func (n *Node) openDynamicQuorum(partitionDir string) (*dynamicQuorum, error) {
	if !isDynamicQuorum(n.cfg) {
		return nil, nil
	}
	mp, err := metafile.ReadMetaProperties(n.fsys, filepath.Join(metadataLogDir(n.cfg), metafile.MetaPropertiesFile))
	if err != nil {
		return nil, fmt.Errorf("dynamic quorum: %w", err)
	}
	boot, _, err := quorum.ReadBootstrapVoters(n.fsys, partitionDir)
	if err != nil {
		return nil, err
	}
	dq := &dynamicQuorum{dirID: mp.DirectoryID, boot: boot, listener: n.cfg.ControllerListenerNames()[0], addrs: map[int32]string{}}
	if ls := n.cfg.AdvertisedControllerListeners(); len(ls) > 0 {
		dq.advertised = ls[0].Addr()
	}
	n.logger.Info("dynamic metadata quorum", "directory_id", dq.dirID.String(), "bootstrap_voters", quorum.Membership{Members: boot.Voters}.VoterKeys())
	return dq, nil
}

// transportOptions make the raft transport follow the membership.
func (dq *dynamicQuorum) transportOptions(o *quorum.TCPOptions) {
	o.Dynamic, o.DirectoryID, o.Advertised, o.Voters = true, dq.dirID, dq.advertised, nil
}

// voterOptions make the voter dynamic; each applied membership goes to
// the transport and the address book.
func (dq *dynamicQuorum) voterOptions(o *quorum.Options, tr *quorum.TCPTransport) {
	o.Dynamic, o.Bootstrap, o.Voters = true, dq.boot.Voters, nil
	o.OnMembership = func(ms quorum.Membership) {
		if tr != nil {
			tr.SetMembers(ms, dq.listener)
		}
		dq.mu.Lock()
		dq.addrs = ms.Addrs(dq.listener)
		dq.mu.Unlock()
	}
}

// voterAddrs are the members' CONTROLLER addresses.
func (dq *dynamicQuorum) voterAddrs() map[int32]string {
	dq.mu.RLock()
	defer dq.mu.RUnlock()
	return maps.Clone(dq.addrs)
}

// observeDynamicQuorum makes a dedicated broker's observer of a dynamic
// quorum start from controller.quorum.bootstrap.servers and follow the
// voters the log names; nil for a static quorum.
func (n *Node) observeDynamicQuorum(o *quorum.ObserverOptions) *dynamicQuorum {
	if len(n.cfg.Voters()) > 0 {
		return nil
	}
	dq := &dynamicQuorum{listener: n.cfg.ControllerListenerNames()[0], addrs: map[int32]string{}}
	o.Voters, o.Bootstrap, o.Listener = nil, n.cfg.QuorumBootstrapServers(), dq.listener
	o.OnMembership = func(ms quorum.Membership) {
		dq.mu.Lock()
		dq.addrs = ms.Addrs(dq.listener)
		dq.mu.Unlock()
	}
	return dq
}

// forwardingManager forwards to the active controller: at the static
// voters' addresses, or at those the dynamic quorum's membership names.
func (n *Node) forwardingManager() *broker.ForwardingManager {
	if n.meta.dyn != nil {
		return broker.NewDynamicForwardingManager(n.meta.view, n.meta.dyn.voterAddrs, n.peers)
	}
	return broker.NewForwardingManager(n.meta.view, voterAddrs(n.cfg), n.peers)
}

// withKRaftVersion sets kraft.version as Kafka finalizes it: 1 on a
// dynamic quorum, 0 (not listed) on a static one. It is the quorum's, not
// the image's: an image bootstrapped with the pinned release's level
// keeps it in a FeatureLevelRecord.
func (n *Node) withKRaftVersion(levels map[string]int16) map[string]int16 {
	out := maps.Clone(levels)
	if out == nil {
		out = map[string]int16{}
	}
	delete(out, kraftVersionFeature)
	if n.meta != nil && n.meta.dyn != nil {
		out[kraftVersionFeature] = 1
	}
	return out
}

const kraftVersionFeature = "kraft.version"

// brokerMembership serves AddRaftVoter and RemoveRaftVoter on a broker
// listener as Kafka's broker does: this node's controller answers when it
// is the active one, else the request is forwarded to the active
// controller; a failure to reach it is NOT_CONTROLLER (retriable).
type brokerMembership struct{ n *Node }

func (b brokerMembership) forward(ctx context.Context, req kmsg.Request) (kmsg.Response, error) {
	if b.n.peers == nil {
		return nil, errors.New("no controller to forward to")
	}
	return b.n.forwardingManager().Forward(ctx, req)
}

func (b brokerMembership) AddRaftVoter(ctx context.Context, req *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse {
	if b.n.ctrl != nil && b.n.ctrl.Active() {
		return b.n.ctrl.AddRaftVoter(ctx, req)
	}
	resp, err := b.forward(ctx, req)
	if r, ok := resp.(*kmsg.AddRaftVoterResponse); ok && err == nil {
		return r
	}
	r := kmsg.NewPtrAddRaftVoterResponse()
	r.ErrorCode, r.ErrorMessage = kerr.NotController.Code, forwardFailure(err)
	return r
}

func (b brokerMembership) RemoveRaftVoter(ctx context.Context, req *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse {
	if b.n.ctrl != nil && b.n.ctrl.Active() {
		return b.n.ctrl.RemoveRaftVoter(ctx, req)
	}
	resp, err := b.forward(ctx, req)
	if r, ok := resp.(*kmsg.RemoveRaftVoterResponse); ok && err == nil {
		return r
	}
	r := kmsg.NewPtrRemoveRaftVoterResponse()
	r.ErrorCode, r.ErrorMessage = kerr.NotController.Code, forwardFailure(err)
	return r
}

// UpdateRaftVoter is a controller-only key; brokers never serve it.
func (b brokerMembership) UpdateRaftVoter(_ context.Context, _ *kmsg.UpdateRaftVoterRequest) *kmsg.UpdateRaftVoterResponse {
	r := kmsg.NewPtrUpdateRaftVoterResponse()
	r.ErrorCode = kerr.UnsupportedVersion.Code
	return r
}

func forwardFailure(err error) *string {
	msg := "the active controller could not be reached"
	if err != nil {
		msg = fmt.Sprintf("%s: %v", msg, err)
	}
	return &msg
}
