package nemesis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// Defaults of a Schedule's zero fields.
const (
	defaultInterval = 5 * time.Second
	defaultHold     = 5 * time.Second
	// healTimeout bounds the healing of one fault (a restart waits for
	// the node to be ready; a reassignment back for its completion).
	healTimeout = 3 * time.Minute
)

// Schedule says which faults, how many and how often.
type Schedule struct {
	// Seed seeds the choice of kinds, nodes and durations.
	Seed int64
	// Interval is the quiet time before each fault (default 5s).
	Interval time.Duration
	// Count is the number of faults; 0 runs until the context ends.
	Count int
	// Kinds are the kinds to draw from; empty means Supported(target).
	Kinds []Kind
	// Hold is how long a fault lasts before it is healed, on average (each
	// draws half to one and a half times it; default 5s).
	Hold time.Duration
}

// Nemesis injects a Schedule's faults into a Target, one at a time.
type Nemesis struct {
	t     Target
	topic string
	s     Schedule
	rec   *history.Recorder
	log   *slog.Logger
	opts  []kgo.Opt
	// admin is the admin-API faults' client, made on first use.
	admin *adminClient

	mu     sync.Mutex
	counts map[Kind]int
}

// New returns a nemesis for t; the admin faults act on topic's partitions
// through a client made with clientOpts (for External targets, its own
// options come first). rec receives FaultStart and FaultEnd ops.
func New(t Target, topic string, s Schedule, rec *history.Recorder, log *slog.Logger, clientOpts ...kgo.Opt) *Nemesis {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if s.Interval <= 0 {
		s.Interval = defaultInterval
	}
	if s.Hold <= 0 {
		s.Hold = defaultHold
	}
	var opts []kgo.Opt
	if e, ok := t.(*external); ok {
		opts = append(opts, e.opts...)
	}
	opts = append(opts, clientOpts...)
	return &Nemesis{t: t, topic: topic, s: s, rec: rec, log: log.With("process", "nemesis"), opts: opts, counts: map[Kind]int{}}
}

// Counts is the number of faults injected so far, by kind.
func (n *Nemesis) Counts() map[Kind]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[Kind]int, len(n.counts))
	for k, v := range n.counts {
		out[k] = v
	}
	return out
}

// kinds are the schedule's kinds, checked against the target.
func (n *Nemesis) kinds() ([]Kind, error) {
	supported := Supported(n.t)
	if len(n.s.Kinds) == 0 {
		return supported, nil
	}
	for _, k := range n.s.Kinds {
		if !slices.Contains(supported, k) {
			return nil, fmt.Errorf("nemesis: this cluster cannot suffer %q faults (it can: %v)", k, supported)
		}
	}
	return n.s.Kinds, nil
}

// Run injects the schedule's faults one after another: a quiet Interval,
// the fault, its hold, its healing. Only one fault is active at a time and
// it touches a minority of the nodes, so a majority stays up and
// connected. It returns once Count faults were injected and healed or ctx
// ended (healing the active fault first); the error is a fault that could
// not be healed, which leaves the cluster damaged.
func (n *Nemesis) Run(ctx context.Context) error {
	kinds, err := n.kinds()
	if err != nil {
		return err
	}
	r := rand64(n.s.Seed)
	var nodes []int32
	if p, ok := n.t.(ProcessTarget); ok {
		nodes = p.Nodes()
	}
	defer func() {
		if n.admin != nil {
			n.admin.close()
		}
	}()
	for i := 0; n.s.Count <= 0 || i < n.s.Count; i++ {
		if !sleep(ctx, n.s.Interval) {
			return nil
		}
		if err := n.one(ctx, plan(r, kinds, nodes, n.s.Hold)); err != nil {
			return err
		}
	}
	return nil
}

// one injects f, holds it and heals it; the heal runs even when ctx ends.
func (n *Nemesis) one(ctx context.Context, f fault) error {
	if adminKind(f.kind) {
		return n.adminFault(ctx, f)
	}
	start := n.rec.Record(history.Op{Kind: history.FaultStart, Process: "nemesis", Offset: -1,
		Fault: string(f.kind), Nodes: f.nodes, Detail: f.detail()})
	n.count(f.kind)
	n.log.Info("fault", "kind", f.kind, "nodes", f.nodes, "detail", start.Detail)
	injectErr := n.inject(f)
	sleep(ctx, f.hold)
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), healTimeout)
	defer cancel()
	healErr := n.heal(hctx, f)
	end := history.Op{Kind: history.FaultEnd, Process: "nemesis", Offset: -1, Fault: string(f.kind), Nodes: f.nodes}
	if err := errors.Join(injectErr, healErr); err != nil {
		end.Err = err.Error()
	}
	n.rec.Record(end)
	if healErr != nil {
		n.log.Error("fault not healed", "kind", f.kind, "nodes", f.nodes, "err", healErr)
		return fmt.Errorf("nemesis: healing %s of nodes %v: %w", f.kind, f.nodes, healErr)
	}
	if injectErr != nil {
		n.log.Warn("fault injected in part", "kind", f.kind, "err", injectErr)
	}
	return nil
}

func (n *Nemesis) count(k Kind) {
	n.mu.Lock()
	n.counts[k]++
	n.mu.Unlock()
}

// inject starts a process, network or clock fault.
func (n *Nemesis) inject(f fault) error {
	p := n.t.(ProcessTarget)
	var errs []error
	for _, id := range f.nodes {
		switch f.kind {
		case Kill:
			errs = append(errs, p.Kill(id))
		case Terminate:
			errs = append(errs, p.Terminate(id))
		case Pause:
			errs = append(errs, p.Pause(id))
		case Partition:
			errs = append(errs, p.Isolate(id))
		case ClockJump:
			errs = append(errs, n.t.(ClockTarget).JumpClock(id, f.offset))
		}
	}
	for _, l := range f.links {
		errs = append(errs, p.CutLink(l[0], l[1]))
	}
	return errors.Join(errs...)
}

// heal undoes f: restarts what it stopped, resumes what it paused, heals
// the links, sets clocks back. A kill or terminate that failed part way
// leaves nodes running, which Restart reports; those errors are ignored
// when the node is up.
func (n *Nemesis) heal(ctx context.Context, f fault) error {
	p := n.t.(ProcessTarget)
	var errs []error
	for _, id := range f.nodes {
		switch f.kind {
		case Kill, Terminate:
			errs = append(errs, restart(ctx, p, id))
		case Pause:
			errs = append(errs, p.Resume(id))
		case ClockJump:
			errs = append(errs, n.t.(ClockTarget).JumpClock(id, 0))
		}
	}
	if f.kind == Partition || f.kind == PartialPartition {
		errs = append(errs, p.HealAll())
	}
	return errors.Join(errs...)
}

// restart brings a stopped node back; a node that would not start is
// tried again until ctx ends (a restart can fail while its port lingers).
func restart(ctx context.Context, p ProcessTarget, id int32) error {
	var err error
	for attempt := 0; ; attempt++ {
		if err = p.Restart(id); err == nil {
			return nil
		}
		if r, ok := p.(interface{ Running(int32) bool }); ok && r.Running(id) {
			return nil // it never went down, or came up but was slow
		}
		if !sleep(ctx, time.Second) {
			return fmt.Errorf("restart node %d (%d attempts): %w", id, attempt+1, err)
		}
	}
}

// rand64 is the schedule's source for seed.
func rand64(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x5eed)) }

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
