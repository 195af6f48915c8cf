package quorumctl

import (
	"context"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/metadata"
)

// runDuties fences brokers whose sessions expired while this voter is the
// active controller and, with auto.leader.rebalance.enable, moves
// leadership back to preferred replicas. Broker heartbeats run apart (the
// broker's lifecycle manager): a heartbeat stuck on an unresponsive old
// controller must not hold up the fencing this voter owes as the new one.
func (c *QuorumController) runDuties() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.stopc
		cancel()
	}()
	check := c.opts.Clock.NewTicker(c.opts.FenceCheckInterval)
	defer check.Stop()
	rebalance := c.opts.Clock.NewTicker(max(c.opts.RebalanceInterval, c.opts.FenceCheckInterval))
	defer rebalance.Stop()
	wasActive := false
	for {
		select {
		case <-c.stopc:
			return
		case <-rebalance.C():
			if c.opts.AutoLeaderRebalance && c.Active() {
				c.rebalanceLeaders(ctx)
			}
		case <-check.C():
			st := c.opts.Quorum.Status()
			if st.IsLeader && !wasActive {
				// A new active controller gives every broker a full
				// session before fencing it.
				c.sessions.Reset(c.opts.Clock.Now())
				c.log.Info("became the active controller", "epoch", st.Epoch)
			}
			wasActive = st.IsLeader
			if st.IsLeader {
				c.fenceExpired(ctx)
			}
		}
	}
}

// fenceExpired fences every broker whose session expired.
func (c *QuorumController) fenceExpired(ctx context.Context) {
	for _, id := range c.sessions.Expired(c.opts.Image(), c.opts.Clock.Now()) {
		_, err := controller.Apply(ctx, c.runner, func(im *metadata.Image) ([]metadata.Record, error) {
			return controller.FenceBroker(im, id), nil
		})
		if err != nil {
			c.log.Warn("fencing a broker whose session expired failed", "broker", id, "err", err)
			continue
		}
		c.log.Info("fenced a broker whose session expired", "broker", id)
	}
}

// rebalanceLeaders runs the automatic preferred-leader rebalance once.
func (c *QuorumController) rebalanceLeaders(ctx context.Context) {
	_, err := controller.Apply(ctx, c.runner, func(im *metadata.Image) ([]metadata.Record, error) {
		return controller.RebalanceLeaders(im), nil
	})
	if err != nil && ctx.Err() == nil {
		c.log.Warn("automatic leader rebalance failed", "err", err)
	}
}
