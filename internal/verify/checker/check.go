package checker

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// checks are the checks other files of the package register (the
// transactional checks of txn.go append to it in init()); Check runs
// them after its own, in order.
var checks []func(ops []history.Op) []Anomaly

// maxPerKind bounds the anomalies of one kind a Result lists; the rest
// are counted in Result.Omitted (a broken build can lose millions of
// values in a soak, and a report of the first thousand says as much).
const maxPerKind = 1000

// maxOps bounds the ops an anomaly carries to show it.
const maxOps = 8

// Check finds the anomalies of a history and counts what it holds. It is
// a function of ops alone (ops are not modified). Values of transactions
// that did not commit are left to the transactional checks.
func Check(ops []history.Op) Result { return check(ops, checks) }

// check runs the built-in checks and then extra.
func check(ops []history.Op, extra []func([]history.Op) []Anomaly) Result {
	x := buildIndex(ops)
	c := &collector{count: map[string]int64{}}
	res := Result{Stats: countStats(ops, x.finals)}
	res.Stats.Unseen = x.lostWrites(c)
	x.duplicates(c)
	x.inconsistentOffsets(c)
	x.nonmonotonicSends(c)
	x.polls(c)
	x.commits(c)
	for _, more := range extra {
		for _, a := range more(ops) {
			c.add(a)
		}
	}
	res.Anomalies = c.list
	if len(c.omitted) > 0 {
		res.Omitted = c.omitted
	}
	return res
}

// collector gathers anomalies, keeping at most maxPerKind of a kind.
type collector struct {
	list    []Anomaly
	count   map[string]int64
	omitted map[string]int64
}

func (c *collector) add(a Anomaly) {
	c.count[a.Kind]++
	if c.count[a.Kind] > maxPerKind {
		if c.omitted == nil {
			c.omitted = map[string]int64{}
		}
		c.omitted[a.Kind]++
		return
	}
	if len(a.Ops) > maxOps {
		a.Ops = a.Ops[:maxOps]
	}
	c.list = append(c.list, a)
}

// countStats counts the history's ops. Unseen is left to the checks.
func countStats(ops []history.Op, finals map[string]bool) Stats {
	s := Stats{FaultsByKind: map[string]int64{}}
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case history.Send:
			s.Sends++
		case history.Ack:
			s.Acks++
		case history.Fail:
			s.Fails++
		case history.Info:
			s.Infos++
		case history.Poll:
			if finals[op.Process] {
				s.FinalReads++
			} else {
				s.Polls++
			}
		case history.Commit:
			s.Commits++
		case history.TxnCommit:
			s.TxnCommits++
		case history.TxnAbort:
			s.TxnAborts++
		case history.FaultStart:
			s.Faults++
			s.FaultsByKind[op.Fault]++
		}
	}
	return s
}

// finalProcesses are the processes that did a final read: their polls are
// final reads.
func finalProcesses(ops []history.Op) map[string]bool {
	m := map[string]bool{}
	for i := range ops {
		if ops[i].Kind == history.Final {
			m[ops[i].Process] = true
		}
	}
	return m
}

// partName names a partition as Kafka's tools do: topic-partition.
func partName(topic string, partition int32) string {
	return fmt.Sprintf("%s-%d", topic, partition)
}

// secs formats an op's time as seconds since the run started.
func secs(op history.Op) string {
	return fmt.Sprintf("%.1f s", op.Time.Seconds())
}

// opsAt returns the ops at the given positions, skipping -1 and repeats.
func (x *index) opsAt(pos ...int32) []history.Op {
	var out []history.Op
	for i, p := range pos {
		if p < 0 || int(p) >= len(x.ops) || containsPos(pos[:i], p) {
			continue
		}
		out = append(out, x.ops[p])
	}
	return out
}

func containsPos(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// how says how op i put a value where it is: "acknowledged at 1.2 s",
// "read by consumer-1 at 3.4 s", "read by the final read".
func (x *index) how(i int32) string {
	op := x.ops[i]
	switch {
	case op.Kind == history.Ack:
		return "acknowledged at " + secs(op)
	case x.finals[op.Process]:
		return "read by the final read (" + op.Process + ")"
	default:
		return "read by " + op.Process + " at " + secs(op)
	}
}
