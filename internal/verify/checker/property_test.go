package checker

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// simConfig shapes a simulated run.
type simConfig struct {
	partitions, producers, consumers int
	steps                            int
}

// simulate plays a run against a simulated log that is right: producers
// append (acknowledged, or with an unknown or failed outcome that may or
// may not have written), markers fill offsets with no value, consumers
// of one group own partitions one at a time, start from the group's
// committed offset and read on, and a final reader reads every partition
// to its end. Its history must have no anomaly.
func simulate(rng *rand.Rand, cfg simConfig) []history.Op {
	s := &sim{rng: rng, cfg: cfg, logs: make([][]string, cfg.partitions), committed: make([]int64, cfg.partitions),
		owner: make([]int, cfg.partitions), pos: make([]int64, cfg.partitions), sent: make([]int, cfg.producers)}
	s.reassign()
	for range cfg.steps {
		switch r := rng.IntN(100); {
		case r < 45:
			s.send()
		case r < 48:
			p := rng.IntN(cfg.partitions)
			s.logs[p] = append(s.logs[p], "") // a marker: an offset with no value
		case r < 85:
			s.poll()
		case r < 95:
			s.commit()
		case r < 97:
			s.add(history.Op{Kind: history.FaultStart, Process: "nemesis", Fault: []string{"kill", "pause", "partition"}[rng.IntN(3)], Offset: -1})
		default:
			s.reassign()
		}
	}
	for p, log := range s.logs {
		s.add(history.Op{Kind: history.Final, Process: "final", Topic: "t", Partition: int32(p), Offset: int64(len(log))})
		for off, v := range log {
			if v != "" {
				s.add(history.Op{Kind: history.Poll, Process: "final", Topic: "t", Partition: int32(p), Offset: int64(off), Value: v, Batch: -1})
			}
		}
	}
	return s.ops
}

type sim struct {
	rng       *rand.Rand
	cfg       simConfig
	ops       []history.Op
	logs      [][]string // per partition, the value at each offset ("" none)
	committed []int64    // the group's committed offset per partition
	owner     []int      // the consumer owning each partition
	pos       []int64    // the owner's position in each partition
	sent      []int      // values each producer sent
	batch     int64
}

func (s *sim) add(op history.Op) {
	op.Index = int64(len(s.ops))
	op.Time = time.Duration(len(s.ops)) * time.Millisecond
	s.ops = append(s.ops, op)
}

func (s *sim) send() {
	pr := s.rng.IntN(s.cfg.producers)
	proc := fmt.Sprintf("producer-%d", pr)
	v := fmt.Sprintf("%s-%d", proc, s.sent[pr])
	s.sent[pr]++
	p := int32(s.rng.IntN(s.cfg.partitions))
	s.add(history.Op{Kind: history.Send, Process: proc, Topic: "t", Partition: p, Offset: -1, Value: v})
	off := int64(len(s.logs[p]))
	switch r := s.rng.IntN(20); {
	case r < 16:
		s.logs[p] = append(s.logs[p], v)
		s.add(history.Op{Kind: history.Ack, Process: proc, Topic: "t", Partition: p, Offset: off, Value: v, Latency: time.Millisecond})
	case r < 18: // unknown outcome; written or not
		if s.rng.IntN(2) == 0 {
			s.logs[p] = append(s.logs[p], v)
		}
		s.add(history.Op{Kind: history.Info, Process: proc, Topic: "t", Partition: p, Offset: -1, Value: v, Err: "timeout"})
	default:
		s.add(history.Op{Kind: history.Fail, Process: proc, Topic: "t", Partition: p, Offset: -1, Value: v, Err: "NOT_ENOUGH_REPLICAS"})
	}
}

// reassign hands the partitions out again; each owner starts from the
// committed offset.
func (s *sim) reassign() {
	parts := make([][]int32, s.cfg.consumers)
	for p := range s.owner {
		c := s.rng.IntN(s.cfg.consumers)
		s.owner[p], s.pos[p] = c, s.committed[p]
		parts[c] = append(parts[c], int32(p))
	}
	for c, ps := range parts {
		s.add(history.Op{Kind: history.Assign, Process: fmt.Sprintf("consumer-%d", c), Topic: "t", Partitions: ps, Offset: -1, Group: "g"})
	}
}

func (s *sim) poll() {
	p := s.rng.IntN(s.cfg.partitions)
	proc := fmt.Sprintf("consumer-%d", s.owner[p])
	s.batch++
	for n := 1 + s.rng.IntN(4); n > 0 && s.pos[p] < int64(len(s.logs[p])); s.pos[p]++ {
		if v := s.logs[p][s.pos[p]]; v != "" {
			s.add(history.Op{Kind: history.Poll, Process: proc, Topic: "t", Partition: int32(p), Offset: s.pos[p], Value: v, Batch: s.batch})
			n--
		}
	}
}

func (s *sim) commit() {
	p := s.rng.IntN(s.cfg.partitions)
	s.committed[p] = s.pos[p]
	s.add(history.Op{Kind: history.Commit, Process: fmt.Sprintf("consumer-%d", s.owner[p]), Group: "g", Topic: "t", Partition: int32(p), Offset: s.pos[p]})
}

func randomConfig(rng *rand.Rand) simConfig {
	return simConfig{partitions: 1 + rng.IntN(3), producers: 1 + rng.IntN(3), consumers: 1 + rng.IntN(3), steps: 50 + rng.IntN(400)}
}

// TestSimulatedHistoriesAreValid: a right log's history has no anomaly.
func TestSimulatedHistoriesAreValid(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		ops := simulate(rng, randomConfig(rng))
		if res := check(ops, nil); !res.Valid() {
			t.Fatalf("seed %d: %d anomalies in a right history, first: %s", seed, len(res.Anomalies), res.Anomalies[0].Explain)
		}
	}
}

// A mutation breaks a history in one way; it returns false when the
// history offers no place to do it.
type mutation struct {
	kind   string
	mutate func(rng *rand.Rand, ops []history.Op) ([]history.Op, bool)
}

var mutations = []mutation{
	{LostWrite, dropReadValue},
	{Duplicate, duplicateAtNewOffset},
	{NonmonotonicSend, swapTwoOffsets},
	{NonmonotonicPoll, rewindPoll},
	{PollSkip, skipPolledValue},
	{CommittedOffsetRegression, lowerCommit},
	{InconsistentOffsets, readOtherValue},
}

// TestMutationsGiveTheirKind: each mutation of a right history gives
// anomalies of exactly its kind.
func TestMutationsGiveTheirKind(t *testing.T) {
	for _, m := range mutations {
		t.Run(m.kind, func(t *testing.T) {
			done := 0
			for seed := uint64(0); seed < 400 && done < 100; seed++ {
				rng := rand.New(rand.NewPCG(seed, 2))
				ops := simulate(rng, randomConfig(rng))
				bad, ok := m.mutate(rng, slices.Clone(ops))
				if !ok {
					continue
				}
				done++
				res := check(bad, nil)
				kinds := res.ByKind()
				if kinds[m.kind] == 0 || len(kinds) != 1 {
					t.Fatalf("seed %d: want only %s, got %v: %v", seed, m.kind, kinds, explains(res))
				}
			}
			if done < 20 {
				t.Fatalf("only %d histories could take the mutation", done)
			}
		})
	}
}

func explains(res Result) []string {
	var out []string
	for _, a := range res.Anomalies {
		out = append(out, a.Explain)
	}
	return out
}

// pickOp returns a random position among the ops ok accepts, or -1.
func pickOp(rng *rand.Rand, ops []history.Op, ok func(i int) bool) int {
	var cands []int
	for i := range ops {
		if ok(i) {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return -1
	}
	return cands[rng.IntN(len(cands))]
}

// dropReadValue loses an acknowledged value from the log: no reader
// reads it, though the final read goes past it.
func dropReadValue(rng *rand.Rand, ops []history.Op) ([]history.Op, bool) {
	i := pickOp(rng, ops, func(i int) bool { return ops[i].Kind == history.Ack })
	if i < 0 {
		return nil, false
	}
	v := ops[i].Value
	return slices.DeleteFunc(ops, func(op history.Op) bool { return op.Kind == history.Poll && op.Value == v }), true
}

// duplicateAtNewOffset writes a read value again at the end of its
// partition, where the final read finds it.
func duplicateAtNewOffset(rng *rand.Rand, ops []history.Op) ([]history.Op, bool) {
	i := pickOp(rng, ops, func(i int) bool { return ops[i].Kind == history.Poll && ops[i].Process == "final" })
	if i < 0 {
		return nil, false
	}
	dup := ops[i]
	for j := range ops {
		if ops[j].Kind == history.Final && ops[j].Partition == dup.Partition {
			dup.Offset = ops[j].Offset
			ops[j].Offset++
		}
	}
	return append(ops, dup), true
}

// swapTwoOffsets swaps the places of two consecutive acknowledged values
// of a producer in a partition: acks and reads agree, the order is
// wrong.
func swapTwoOffsets(rng *rand.Rand, ops []history.Op) ([]history.Op, bool) {
	type pp struct {
		proc string
		part int32
	}
	last := map[pp]int{}
	var pairs [][2]int
	for i, op := range ops {
		if op.Kind != history.Ack {
			continue
		}
		k := pp{op.Process, op.Partition}
		if j, ok := last[k]; ok {
			pairs = append(pairs, [2]int{j, i})
		}
		last[k] = i
	}
	if len(pairs) == 0 {
		return nil, false
	}
	pr := pairs[rng.IntN(len(pairs))]
	a, b := ops[pr[0]], ops[pr[1]]
	ops[pr[0]].Offset, ops[pr[1]].Offset = b.Offset, a.Offset
	for i := range ops {
		if ops[i].Kind == history.Poll && ops[i].Partition == a.Partition {
			switch ops[i].Value {
			case a.Value:
				ops[i].Value = b.Value
			case b.Value:
				ops[i].Value = a.Value
			}
		}
	}
	return ops, true
}

// consumerRuns lists, per consumer and partition, its polls in order,
// cut where an Assign of that consumer intervenes.
func consumerRuns(ops []history.Op) [][]int {
	type pp struct {
		proc string
		part int32
	}
	open := map[pp]int{}
	var runs [][]int
	for i, op := range ops {
		switch {
		case op.Kind == history.Assign:
			for k := range open {
				if k.proc == op.Process {
					delete(open, k)
				}
			}
		case op.Kind == history.Poll && op.Process != "final":
			k := pp{op.Process, op.Partition}
			r, ok := open[k]
			if !ok {
				r = len(runs)
				runs = append(runs, nil)
				open[k] = r
			}
			runs[r] = append(runs[r], i)
		}
	}
	return runs
}

// rewindPoll makes a consumer read again from an earlier offset (and on)
// without a new assignment.
func rewindPoll(rng *rand.Rand, ops []history.Op) ([]history.Op, bool) {
	var long [][]int
	for _, r := range consumerRuns(ops) {
		if len(r) >= 2 {
			long = append(long, r)
		}
	}
	if len(long) == 0 {
		return nil, false
	}
	r := long[rng.IntN(len(long))]
	end := 1 + rng.IntN(len(r)-1)
	from := rng.IntN(end)
	var replay []history.Op
	for _, i := range r[from : end+1] {
		op := ops[i]
		op.Time, op.Batch = ops[r[end]].Time, -2
		replay = append(replay, op)
	}
	return slices.Insert(ops, r[end]+1, replay...), true
}

// skipPolledValue removes a consumer's read of a value between two
// others it read in the same assignment.
func skipPolledValue(rng *rand.Rand, ops []history.Op) ([]history.Op, bool) {
	var mids []int
	for _, r := range consumerRuns(ops) {
		if len(r) >= 3 {
			mids = append(mids, r[1:len(r)-1]...)
		}
	}
	if len(mids) == 0 {
		return nil, false
	}
	i := mids[rng.IntN(len(mids))]
	return slices.Delete(ops, i, i+1), true
}

// lowerCommit adds a commit one below a group's last for a partition.
func lowerCommit(rng *rand.Rand, ops []history.Op) ([]history.Op, bool) {
	i := pickOp(rng, ops, func(i int) bool { return ops[i].Kind == history.Commit && ops[i].Offset > 0 })
	if i < 0 {
		return nil, false
	}
	c := ops[i]
	c.Offset--
	return append(ops, c), true
}

// readOtherValue makes a consumer read a value nobody wrote at an offset
// that holds another.
func readOtherValue(rng *rand.Rand, ops []history.Op) ([]history.Op, bool) {
	i := pickOp(rng, ops, func(i int) bool { return ops[i].Kind == history.Poll && ops[i].Process != "final" })
	if i < 0 {
		return nil, false
	}
	ops[i].Value = "stranger-0"
	return ops, true
}
