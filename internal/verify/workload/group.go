package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// Churn actions of the Group workload.
const (
	churnJoin  = "join"
	churnLeave = "leave"
	churnKill  = "kill"
)

// Group is Queue with group churn: from cfg.Consumers members, every
// ChurnInterval or so (a seeded schedule, cfg.Seed) a new member joins,
// one leaves cleanly (LeaveGroup and Close) or one is killed (its
// connections cut without leaving, so the coordinator expires its
// session). Each new member is a new process ("consumer-<n>", never
// reused). Odd-numbered members use the classic protocol and even ones
// KIP-848's consumer protocol, so the group runs mixed, migrating between
// the two as Kafka's group.consumer.migration.policy allows.
func Group(ctx context.Context, cfg Config, rec *history.Recorder) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &churner{ctx: ctx, cfg: cfg, rec: rec, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed))}
	for range cfg.Consumers {
		if err := g.join(); err != nil {
			cancel()
			g.stop()
			return err
		}
	}
	var prodErr error
	var pw sync.WaitGroup
	pw.Go(func() { prodErr = runProducers(ctx, cfg, rec) })
	g.churn()
	g.stop()
	pw.Wait()
	return prodErr
}

// churner owns the Group workload's live members.
type churner struct {
	ctx context.Context
	cfg Config
	rec *history.Recorder
	rng *rand.Rand
	// next numbers the next member's process.
	next int
	// Invariant: live holds the members started and neither left nor
	// killed; each has a Run goroutine counted in runs.
	live []*Consumer
	runs sync.WaitGroup
	// gone counts the goroutines closing departed members.
	gone sync.WaitGroup
}

// minMembers and maxMembers bound the churn around cfg.Consumers.
func (g *churner) bounds() (lo, hi int) {
	return 1, max(g.cfg.Consumers*2, 2)
}

func (g *churner) join() error {
	g.next++
	c, err := NewConsumer(g.cfg, fmt.Sprintf("consumer-%d", g.next), g.rec, g.next%2 == 0)
	if err != nil {
		return err
	}
	g.live = append(g.live, c)
	g.runs.Go(func() { c.Run(g.ctx) })
	return nil
}

// churn applies one action per interval until ctx is done.
func (g *churner) churn() {
	for {
		// Uniform in [interval/2, 3*interval/2): a mean of the interval.
		d := g.cfg.ChurnInterval/2 + time.Duration(g.rng.Int64N(int64(g.cfg.ChurnInterval)))
		if sleep(g.ctx, g.cfg.Clock, d) != nil {
			return
		}
		action := g.pick()
		g.cfg.Log.Info("group churn", "action", action, "members", len(g.live))
		if err := g.apply(action); err != nil {
			g.cfg.Log.Warn("group churn", "action", action, "err", err)
		}
	}
}

// pick chooses an action the bounds allow: join when at the minimum,
// leave or kill when at the maximum, any of the three otherwise.
func (g *churner) pick() string {
	lo, hi := g.bounds()
	var choices []string
	if len(g.live) < hi {
		choices = append(choices, churnJoin)
	}
	if len(g.live) > lo {
		choices = append(choices, churnLeave, churnKill)
	}
	return choices[g.rng.IntN(len(choices))]
}

func (g *churner) apply(action string) error {
	if action == churnJoin {
		return g.join()
	}
	i := g.rng.IntN(len(g.live))
	c := g.live[i]
	g.live = append(g.live[:i], g.live[i+1:]...)
	if action == churnKill {
		c.Kill()
		return nil
	}
	g.gone.Go(func() { c.Leave(leaveTimeout) })
	return nil
}

// stop makes the live members leave once their Run loops are over and
// waits for every departure.
func (g *churner) stop() {
	g.runs.Wait()
	for _, c := range g.live {
		g.gone.Go(func() { c.Leave(leaveTimeout) })
	}
	g.live = nil
	g.gone.Wait()
}
