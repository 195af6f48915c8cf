// Package sim is a deterministic simulation of the metadata quorum with the
// controller on top: N voters (quorum.Voter, stepped in one goroutine) over
// an in-memory network that delays, drops and partitions, on MemFS disks
// that crash, under a manual clock, with a seeded PRNG choosing every fault
// and every controller operation. Raft's own election jitter reads
// crypto/rand, which tests fix per seed with testing/cryptotest, so a seed
// replays the same run.
//
// After every step the simulation checks: at most one leader per term; an
// offset once committed never holds another record (on any node, across
// restarts); every image published at an offset is the same on every node;
// and at the end, after healing, every node catches up to one image that
// holds every acknowledged operation.
package sim

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/controller"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quorum"
)

// tick is one Raft tick of simulated time; each step advances the clock by it.
const tick = 10 * time.Millisecond

var epochStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Config is one simulation run.
type Config struct {
	Seed   uint64
	Voters int // default 3
	Steps  int // steps of faults and workload (default 1000), then the settle phase
	// ElectionTimeout in simulated time (default 100 ms; ticks are 10 ms).
	ElectionTimeout time.Duration
	// SnapshotBytes is metadata.log.max.record.bytes.between.snapshots
	// (default 2 KiB, so runs take many snapshots and send some).
	SnapshotBytes int64
	// DropRate is the share of messages lost (default 0.02); MaxDelay the
	// longest delivery delay (default 20 ms).
	DropRate float64
	MaxDelay time.Duration
	// NoFaults turns crashes and partitions off (benchmarks, liveness).
	NoFaults bool
}

// Stats count what a run did.
type Stats struct {
	Steps, Commits, AckedOps, FailedOps, Crashes, Partitions, Leaders int
	// SnapshotsSent counts snapshots delivered to a lagging voter.
	SnapshotsSent int
	// Trace hashes the run's events: equal seeds give equal traces.
	Trace uint64
}

// Sim is one run's world. Everything happens on the caller's goroutine,
// except each controller operation's own goroutine, which the sim waits for
// at every hand-off.
type Sim struct {
	cfg   Config
	rng   *rand.Rand
	clk   *clock.Manual
	net   *network
	ids   []int32
	nodes map[int32]*node
	ctrl  *controller.Controller

	committed map[int64]committedRecord
	images    map[int64]uint64 // offset -> hash of the image published there
	leaders   map[int64]int32  // term -> its leader
	acked     map[int64]string // offsets of acknowledged operations -> their data
	reports   []report
	opReq     chan proposeRequest
	// settling turns faults off for the end of the run.
	settling  bool
	violation error
	stats     Stats
	trace     hashWriter
}

type committedRecord struct {
	epoch int32
	data  string
}

type report struct {
	from, to int32
	failed   bool
}

// New builds a simulation; Run drives it.
func New(cfg Config) (*Sim, error) {
	if cfg.Voters <= 0 {
		cfg.Voters = 3
	}
	if cfg.Steps <= 0 {
		cfg.Steps = 1000
	}
	if cfg.ElectionTimeout <= 0 {
		cfg.ElectionTimeout = 100 * time.Millisecond
	}
	if cfg.SnapshotBytes <= 0 {
		cfg.SnapshotBytes = 2 << 10
	}
	if cfg.DropRate == 0 {
		cfg.DropRate = 0.02
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 20 * time.Millisecond
	}
	s := &Sim{
		cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)), clk: newClock(), nodes: map[int32]*node{},
		committed: map[int64]committedRecord{}, images: map[int64]uint64{}, leaders: map[int64]int32{}, acked: map[int64]string{},
		opReq: make(chan proposeRequest), trace: hashWriter{h: fnv.New64a()},
	}
	s.net = &network{rng: s.rng, now: s.clk.Now, dropRate: cfg.DropRate, maxDelay: cfg.MaxDelay, cut: map[[2]int32]bool{},
		snapshotLost: func(from, to int32) { s.reports = append(s.reports, report{from: from, to: to, failed: true}) }}
	s.ctrl = controller.New(controller.Options{NumPartitions: 1, DefaultReplicationFactor: 1, Configs: anyConfig{}, NewTopicID: func() (kafka.UUID, error) { return s.topicID(), nil }})
	for i := range cfg.Voters {
		s.ids = append(s.ids, int32(i))
	}
	for _, id := range s.ids {
		n, err := newNode(id)
		if err != nil {
			return nil, err
		}
		s.nodes[id] = n
		if err := s.start(n); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Run plays the configured steps, then heals everything and lets the
// cluster settle; it returns the first invariant violated.
func (s *Sim) Run() (Stats, error) {
	for range s.cfg.Steps {
		if !s.cfg.NoFaults {
			s.faults()
		}
		s.workload()
		s.step()
		if s.violation != nil {
			return s.finish(), s.violation
		}
	}
	return s.finish(), s.settle()
}

func (s *Sim) finish() Stats {
	s.stats.Trace = s.trace.h.Sum64()
	return s.stats
}

// step advances time by one tick: every live voter ticks, then every
// message due is delivered, then the invariants are checked.
func (s *Sim) step() {
	s.stats.Steps++
	s.clk.Advance(tick)
	for _, id := range s.ids {
		if n := s.nodes[id]; n.up {
			n.voter.Tick()
			s.process(n)
		}
	}
	for {
		m, ok := s.net.due()
		if !ok {
			break
		}
		to := s.nodes[quorum.NodeID(m.msg.GetTo())]
		if to == nil || !to.up || s.net.isCut(m.from, to.id) {
			s.net.lost(m.from, quorum.NodeID(m.msg.GetTo()), m.msg)
			s.flushReports()
			continue
		}
		if err := to.voter.Step(m.msg); err != nil {
			s.fail("node %d refused %s from %d: %v", to.id, m.msg.GetType(), m.from, err)
		}
		s.process(to)
		if m.msg.GetType() == raftpb.MsgSnap {
			s.stats.SnapshotsSent++
			s.reports = append(s.reports, report{from: m.from, to: to.id})
		}
		s.flushReports()
	}
	s.checkLeaders()
}

func (s *Sim) process(n *node) {
	if err := n.voter.Process(); err != nil {
		s.fail("node %d stopped: %v", n.id, err)
	}
	s.flushReports()
}

// flushReports hands queued snapshot reports to the senders' voters.
func (s *Sim) flushReports() {
	for len(s.reports) > 0 {
		r := s.reports[0]
		s.reports = s.reports[1:]
		if n := s.nodes[r.from]; n.up {
			n.voter.ReportSnapshot(r.to, r.failed)
			if err := n.voter.Process(); err != nil {
				s.fail("node %d stopped: %v", n.id, err)
			}
		}
	}
}

func (s *Sim) fail(format string, args ...any) {
	if s.violation == nil {
		s.violation = fmt.Errorf("step %d (t=%s): %s", s.stats.Steps, s.clk.Now().Sub(epochStart), fmt.Sprintf(format, args...))
	}
}

func (s *Sim) event(format string, args ...any) {
	fmt.Fprintf(&s.trace, "%d "+format+"\n", append([]any{s.stats.Steps}, args...)...)
}

// checkLeaders: at most one leader per term, ever.
func (s *Sim) checkLeaders() {
	for _, id := range s.ids {
		n := s.nodes[id]
		if !n.up {
			continue
		}
		st := n.voter.Status()
		if !st.IsLeader {
			continue
		}
		if prev, ok := s.leaders[st.Epoch]; ok && prev != id {
			s.fail("two leaders in term %d: %d and %d", st.Epoch, prev, id)
		} else if !ok {
			s.leaders[st.Epoch] = id
			s.stats.Leaders++
			s.event("leader %d term %d", id, st.Epoch)
		}
	}
}

// checkCommitted: the record at a committed offset never changes.
func (s *Sim) checkCommitted(id int32, c quorum.Committed) {
	rec := committedRecord{epoch: c.Epoch, data: string(c.Data)}
	if prev, ok := s.committed[c.Offset]; ok {
		if prev != rec {
			s.fail("node %d applied a different record at committed offset %d", id, c.Offset)
		}
		return
	}
	s.committed[c.Offset] = rec
	s.stats.Commits++
}

// checkImage: every image published at an offset is the same everywhere.
func (s *Sim) checkImage(id int32, im *metadata.Image) {
	h := fnv.New64a()
	h.Write([]byte(im.String()))
	sum := h.Sum64()
	if prev, ok := s.images[im.Offset()]; ok && prev != sum {
		s.fail("node %d published a different image at offset %d:\n%s", id, im.Offset(), im)
	}
	s.images[im.Offset()] = sum
}

// settle heals the network, restarts every node and runs until one leader
// commits a new operation and every node holds the same image, which must
// hold every acknowledged record.
func (s *Sim) settle() error {
	s.settling = true
	s.net.heal()
	s.net.dropRate = 0
	const maxSettleSteps = 3000
	for i := range maxSettleSteps {
		// A proposal stuck for long is ended by a crash; restart it here.
		for _, id := range s.ids {
			if n := s.nodes[id]; !n.up {
				if err := s.start(n); err != nil {
					return err
				}
				s.event("restart %d", id)
			}
		}
		s.step()
		if s.violation != nil {
			return s.violation
		}
		if i%20 != 19 {
			continue
		}
		leader := s.leader()
		if leader == nil {
			continue
		}
		if err := s.runOp(leader, "settle-probe", s.opProbe(i)); err != nil {
			continue
		}
		if s.violation != nil {
			return s.violation
		}
		for range 50 {
			s.step()
		}
		if s.converged() {
			return s.checkAcked()
		}
	}
	return fmt.Errorf("no convergence %d steps after healing: %s", maxSettleSteps, s.describe())
}

func (s *Sim) leader() *node {
	for _, id := range s.ids {
		if n := s.nodes[id]; n.up && n.voter.Status().IsLeader {
			return n
		}
	}
	return nil
}

func (s *Sim) converged() bool {
	first := s.nodes[s.ids[0]].loader.Image()
	for _, id := range s.ids[1:] {
		if im := s.nodes[id].loader.Image(); im.Offset() != first.Offset() || im.String() != first.String() {
			return false
		}
	}
	return true
}

func (s *Sim) checkAcked() error {
	final := s.nodes[s.ids[0]].loader.Image().Offset()
	for _, off := range slices.Sorted(maps.Keys(s.acked)) {
		if off > final {
			return fmt.Errorf("acknowledged record at offset %d beyond the final image offset %d", off, final)
		}
		if got, ok := s.committed[off]; !ok || got.data != s.acked[off] {
			return fmt.Errorf("acknowledged record at offset %d lost or changed", off)
		}
	}
	return nil
}

func (s *Sim) describe() string {
	out := ""
	for _, id := range s.ids {
		n := s.nodes[id]
		if !n.up {
			out += fmt.Sprintf("[node %d down] ", id)
			continue
		}
		st := n.voter.Status()
		out += fmt.Sprintf("[node %d leader=%d term=%d commit=%d applied=%d image=%d] ", id, st.Leader, st.Epoch, st.CommitOffset, st.AppliedOffset, n.loader.Image().Offset())
	}
	return out
}
