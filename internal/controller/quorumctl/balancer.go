package quorumctl

import (
	"context"
	"slices"
	"time"

	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/controller/balance"
	"github.com/sluice-io/sluice/internal/metadata"
)

// BrokerSet is the membership the automatic balancer reacts to: the
// registered brokers and which of them are unfenced.
type BrokerSet struct {
	Registered, Unfenced []int32
}

// Brokers returns im's broker set.
func Brokers(im *metadata.Image) BrokerSet {
	var s BrokerSet
	for _, id := range im.BrokerIDs() {
		s.Registered = append(s.Registered, id)
		if b, _ := im.Broker(id); !b.Fenced {
			s.Unfenced = append(s.Unfenced, id)
		}
	}
	return s
}

// Equal reports whether two sets are the same.
func (s BrokerSet) Equal(o BrokerSet) bool {
	return slices.Equal(s.Registered, o.Registered) && slices.Equal(s.Unfenced, o.Unfenced)
}

// AutoBalance computes the balancing plan on the latest image and, when
// execute is set, starts it as reassignments in the same operation (so no
// other change comes between plan and start). It returns the plan; a
// voter that is not the active controller fails with ErrNotController.
func (c *QuorumController) AutoBalance(ctx context.Context, execute bool) (balance.Plan, error) {
	if err := c.notActive(); err != nil {
		return balance.Plan{}, err
	}
	plan, _, err := controller.Run(ctx, c.runner, func(im *metadata.Image) ([]metadata.Record, balance.Plan) {
		return c.opts.Logic.AutoBalance(im, execute)
	})
	return plan, err
}

// BalancerSettle is how long the broker set must stay unchanged before the
// automatic balancer plans: a broker registers fenced and is unfenced a
// moment later, and several brokers often join together.
const BalancerSettle = 3 * time.Second

// RunAutoBalancer watches the broker set while this voter is the active
// controller and, once a change (a broker registered, unfenced or
// unregistered) has settled, computes a balancing plan by count; with
// execute (sluice.balancer.auto.enable) it starts the plan's
// reassignments, otherwise it logs the plan. It returns when the
// controller stops. The set seen when this voter becomes active is the
// baseline: only later changes trigger a plan.
func (c *QuorumController) RunAutoBalancer(execute bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.stopc
		cancel()
	}()
	tick := c.opts.Clock.NewTicker(c.opts.FenceCheckInterval)
	defer tick.Stop()
	var last BrokerSet
	var changedAt time.Time
	known, pending := false, false
	for {
		select {
		case <-c.stopc:
			return
		case <-tick.C():
		}
		if !c.Active() {
			known, pending = false, false
			continue
		}
		now := c.opts.Clock.Now()
		set := Brokers(c.opts.Image())
		switch {
		case !known:
			last, known = set, true
		case !set.Equal(last):
			last, pending, changedAt = set, true, now
		case pending && now.Sub(changedAt) >= BalancerSettle:
			pending = false
			c.autoBalanceOnce(ctx, execute)
		}
	}
}

func (c *QuorumController) autoBalanceOnce(ctx context.Context, execute bool) {
	plan, err := c.AutoBalance(ctx, execute)
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("automatic balancing failed", "err", err)
		}
		return
	}
	c.log.Info("balancing plan after a broker change", "executed", execute && len(plan.Reassignments) > 0,
		"reassignments", len(plan.Reassignments), "replica_moves", plan.Moves, "leader_reorders", plan.Reorders,
		"unplaced", plan.Unplaced, "by", "count")
}
