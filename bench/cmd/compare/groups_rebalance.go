package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	rebalanceTimeout  = 90 * time.Second // for one leave, or one settle, before the run fails
	settlePoll        = 5 * time.Millisecond
	steadyRecordBytes = 100
	steadyTick        = 10 * time.Millisecond
	// leavePhaseSpread bounds the random pause before each leave: members heartbeat on
	// their own timers (3 s classic, 5 s consumer protocol), and a leave timed always
	// right after a settle would always meet them at the same phase of those timers.
	leavePhaseSpread = 5 * time.Second
)

// steadyProducer writes one record to each partition of a topic every steadyTick until
// stopped, so every partition always has a record to fetch.
type steadyProducer struct {
	cl     *kgo.Client
	cancel context.CancelFunc
	done   chan struct{}
	errs   atomic.Int64
}

func startSteadyProducer(ctx context.Context, bootstrap, topic string, partitions int) (*steadyProducer, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds(bootstrap)...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	if err != nil {
		return nil, fmt.Errorf("steady producer: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &steadyProducer{cl: cl, cancel: cancel, done: make(chan struct{})}
	value := make([]byte, steadyRecordBytes)
	go func() {
		defer close(p.done)
		t := time.NewTicker(steadyTick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			for part := range partitions {
				cl.Produce(ctx, &kgo.Record{Partition: int32(part), Value: value}, func(_ *kgo.Record, err error) {
					if err != nil && ctx.Err() == nil {
						p.errs.Add(1)
					}
				})
			}
		}
	}()
	return p, nil
}

func (p *steadyProducer) stop() int64 {
	p.cancel()
	<-p.done
	p.cl.Close()
	return p.errs.Load()
}

// rebalanceRuns times the leaves of every variant in one session.
func (s *suite) rebalanceRuns(ctx context.Context, b broker, sys system, round int) error {
	supported, why := kip848Support(ctx, b.Bootstrap())
	for _, v := range groupVariants {
		if v.Consumer && !supported {
			s.res.fail(rebalanceRow(v), sys, round, why)
			s.log.Warn("consumer protocol row not run", "system", sys, "reason", why)
			continue
		}
		if err := s.rebalanceVariant(ctx, b, sys, round, v); err != nil {
			s.res.fail(rebalanceRow(v), sys, round, err.Error())
			s.log.Warn("rebalance run failed", "system", sys, "variant", v.Key, "err", err)
		}
	}
	return nil
}

// rebalanceVariant runs one group of the variant under the steady producer and times
// leavesPerRound leaves, each followed by a replacement member.
func (s *suite) rebalanceVariant(ctx context.Context, b broker, sys system, round int, v groupVariant) error {
	topic := "rebalance-" + v.Key
	if err := createTopic(ctx, b, topic, rebalancePartitions); err != nil {
		return err
	}
	prod, err := startSteadyProducer(ctx, b.Bootstrap(), topic, rebalancePartitions)
	if err != nil {
		return err
	}
	g := &benchGroup{bootstrap: b.Bootstrap(), name: fmt.Sprintf("bench-%s-r%d", v.Key, round), topic: topic, v: v}
	defer func() {
		g.closeAll()
		if n := prod.stop(); n > 0 {
			s.res.note("round %d %s %s: the steady producer saw %d failed records.", round, sys, v.Key, n)
		}
	}()
	mark := time.Now()
	for range rebalanceMembers {
		if err := g.add(ctx); err != nil {
			return err
		}
	}
	took, err := g.waitSettled(ctx, g.members, mark)
	if err != nil {
		return fmt.Errorf("first settle of %d members: %w", rebalanceMembers, err)
	}
	s.log.Info("group settled", "system", sys, "variant", v.Key, "after", took.Round(time.Millisecond))
	for i := range s.leavesPerRound() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rand.N(leavePhaseSpread)):
		}
		d, assigned, err := g.timeLeave(ctx, i%len(g.members))
		if err != nil {
			return fmt.Errorf("leave %d: %w", i+1, err)
		}
		if err := g.checkProtocol(); err != nil {
			return err
		}
		l := load()
		s.res.add(rebalanceRow(v), sys, round, float64(d.Microseconds())/1e3, l)
		s.res.add(rebalanceAssignedRow(v), sys, round, float64(assigned.Microseconds())/1e3, l)
		s.log.Info("rebalance after leave", "system", sys, "variant", v.Key, "leave", i+1, "ms", d.Milliseconds(), "assigned_ms", assigned.Milliseconds())
		mark := time.Now()
		for _, m := range g.members {
			m.setMark(mark)
		}
		if err := g.add(ctx); err != nil {
			return err
		}
		if _, err := g.waitSettled(ctx, g.members, mark); err != nil {
			return fmt.Errorf("settle after replacing member %d: %w", i+1, err)
		}
	}
	return nil
}

// benchGroup is the rebalance rows' group: its live members, and the request counts of
// those already closed.
type benchGroup struct {
	bootstrap, name, topic string
	v                      groupVariant
	members                []*groupMember
	closedJoins, closedHBs int64
}

func (g *benchGroup) add(ctx context.Context) error {
	m, err := startGroupMember(ctx, g.bootstrap, g.name, g.topic, g.v)
	if err != nil {
		return err
	}
	g.members = append(g.members, m)
	return nil
}

// timeLeave closes member i and returns the time from the call until the others settle,
// and until the last partition was assigned to one of them.
func (g *benchGroup) timeLeave(ctx context.Context, i int) (settle, assigned time.Duration, err error) {
	leaver := g.members[i]
	rest := append(append([]*groupMember{}, g.members[:i]...), g.members[i+1:]...)
	t0 := time.Now()
	for _, m := range rest {
		m.setMark(t0)
	}
	closed := make(chan struct{})
	go func() {
		leaver.close()
		close(closed)
	}()
	settle, err = g.waitSettled(ctx, rest, t0)
	<-closed
	g.closedJoins += leaver.joinGroups.Load()
	g.closedHBs += leaver.heartbeats.Load()
	g.members = rest
	if err != nil {
		return 0, 0, err
	}
	views := make([]memberView, len(rest))
	for i, m := range rest {
		views[i] = m.view()
	}
	last, ok := lastAssigned(views, t0)
	if !ok {
		return 0, 0, fmt.Errorf("settled with no partition assigned after the leave")
	}
	return settle, last.Sub(t0), nil
}

// waitSettled polls the members until they settle and returns the time from mark to the
// record that completed it. The members' marks must already be at or before mark.
func (g *benchGroup) waitSettled(ctx context.Context, members []*groupMember, mark time.Time) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, rebalanceTimeout)
	defer cancel()
	t := time.NewTicker(settlePoll)
	defer t.Stop()
	for {
		views := make([]memberView, len(members))
		for i, m := range members {
			views[i] = m.view()
		}
		if at, ok := settled(views, rebalancePartitions); ok {
			return at.Sub(mark), nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%d members did not settle on %d partitions: %w (%s)", len(members), rebalancePartitions, ctx.Err(), describeViews(views))
		case <-t.C:
		}
	}
}

// describeViews summarizes who holds what, for a failure message.
func describeViews(views []memberView) string {
	out := ""
	for i, v := range views {
		if i > 0 {
			out += "; "
		}
		out += fmt.Sprintf("member %d holds %d, polled %d", i, len(v.Assigned), len(v.Seen))
	}
	return out
}

func (g *benchGroup) checkProtocol() error {
	joins, hbs := g.closedJoins, g.closedHBs
	for _, m := range g.members {
		joins += m.joinGroups.Load()
		hbs += m.heartbeats.Load()
	}
	return protocolCheck(g.v, joins, hbs)
}

func (g *benchGroup) closeAll() {
	for _, m := range g.members {
		m.close()
	}
	g.members = nil
}
