package node

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/quorum"
)

// updateRetry spaces UpdateRaftVoter attempts that failed or await their
// commit.
const updateRetry = time.Second

// watchOwnEndpoints makes this voter ask the leader to record its current
// CONTROLLER listeners (UpdateRaftVoter) whenever the voter set records
// others, as Kafka's voters do after a restart with new listeners. It ends
// with the driver.
func (n *Node) watchOwnEndpoints(dq *dynamicQuorum, d *quorum.Driver) {
	var own []quorum.Endpoint
	for _, l := range n.cfg.AdvertisedControllerListeners() {
		own = append(own, quorum.Endpoint{Name: l.Name, Host: l.Host, Port: int32(l.Port)})
	}
	go func() {
		for {
			changed := d.StatusChanged()
			wait := time.Duration(0)
			if st := d.Status(); len(st.Members) > 0 {
				if me, ok := (quorum.Membership{Members: st.Members}).Find(n.cfg.NodeID()); ok && !me.Learner && me.DirectoryID == dq.dirID && !slices.Equal(me.Endpoints, own) {
					me.Endpoints = own
					if err := n.updateOwnEndpoints(dq, d, st, me); err != nil {
						n.logger.Warn("UpdateRaftVoter failed; retrying", "err", err)
					}
					wait = updateRetry
				}
			}
			if !n.waitQuorum(d, changed, wait) {
				return
			}
		}
	}()
}

// waitQuorum waits for a status change (or wait, when above 0); false once
// the driver is done.
func (n *Node) waitQuorum(d *quorum.Driver, changed <-chan struct{}, wait time.Duration) bool {
	var tc <-chan time.Time
	if wait > 0 {
		t := n.clk.NewTimer(wait)
		defer t.Stop()
		tc = t.C()
	}
	select {
	case <-changed:
	case <-tc:
	case <-d.Done():
		return false
	}
	return true
}

// updateOwnEndpoints records me's endpoints: through this driver when it
// leads, else with UpdateRaftVoter to the leader's CONTROLLER listener. A
// voter whose listeners moved may not know the leader (the leader still
// sends to its old address): it asks another voter, whose
// NOT_LEADER_OR_FOLLOWER answer names the leader, as Kafka's does.
func (n *Node) updateOwnEndpoints(dq *dynamicQuorum, d *quorum.Driver, st quorum.Status, me quorum.Member) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*updateRetry)
	defer cancel()
	if st.IsLeader {
		return d.UpdateVoter(ctx, me)
	}
	target, epoch := st.Leader, int32(st.Epoch)
	if target < 0 || target == me.ID {
		for _, m := range st.Members {
			if m.ID != me.ID && !m.Learner {
				target = m.ID
				break
			}
		}
	}
	for range 2 {
		r, err := n.sendUpdateVoter(ctx, dq, target, epoch, me)
		if err != nil {
			return err
		}
		if r.ErrorCode == 0 {
			n.logger.Info("asked the leader to record this voter's listeners", "leader", target, "endpoints", fmt.Sprint(me.Endpoints))
			return nil
		}
		if r.ErrorCode != kerr.NotLeaderForPartition.Code || r.CurrentLeader.LeaderID < 0 || r.CurrentLeader.LeaderID == target {
			return fmt.Errorf("controller %d answered UpdateRaftVoter: %w", target, kerr.ErrorForCode(r.ErrorCode))
		}
		target, epoch = r.CurrentLeader.LeaderID, r.CurrentLeader.LeaderEpoch
	}
	return fmt.Errorf("no leader took UpdateRaftVoter")
}

func (n *Node) sendUpdateVoter(ctx context.Context, dq *dynamicQuorum, target, epoch int32, me quorum.Member) (*kmsg.UpdateRaftVoterResponse, error) {
	addr, ok := dq.voterAddrs()[target]
	if !ok || n.peers == nil {
		return nil, fmt.Errorf("no address for controller %d", target)
	}
	req := kmsg.NewPtrUpdateRaftVoterRequest()
	req.ClusterID = &n.clusterID
	req.CurrentLeaderEpoch, req.VoterID, req.VoterDirectoryID = epoch, me.ID, me.DirectoryID
	for _, e := range me.Endpoints {
		l := kmsg.NewUpdateRaftVoterRequestListener()
		l.Name, l.Host, l.Port = e.Name, e.Host, uint16(e.Port)
		req.Listeners = append(req.Listeners, l)
	}
	req.KRaftVersionFeature.MinSupportedVersion, req.KRaftVersionFeature.MaxSupportedVersion = 0, 1
	resp, err := n.peers.Request(ctx, addr, req)
	if err != nil {
		return nil, fmt.Errorf("send UpdateRaftVoter to controller %d at %s: %w", target, addr, err)
	}
	r, ok := resp.(*kmsg.UpdateRaftVoterResponse)
	if !ok {
		return nil, fmt.Errorf("controller %d answered UpdateRaftVoter with %T", target, resp)
	}
	return r, nil
}
