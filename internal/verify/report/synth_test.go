package report

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/sluice-io/sluice/internal/verify/checker"
	"github.com/sluice-io/sluice/internal/verify/history"
)

// synth builds a queue-workload history of about n ops over span: three
// producers sending to two partitions (acks with latencies that jump
// during faults), a consumer polling, a final reader, and the nemesis's
// faults. Deterministic for a seed.
type synth struct {
	rng    *rand.Rand
	ops    []history.Op
	next   map[int32]int64 // next offset per partition
	faults []history.Op    // fault ops, merged in by time
}

func synthHistory(n int, span time.Duration, faults []history.Op) []history.Op {
	s := &synth{rng: rand.New(rand.NewSource(1)), next: map[int32]int64{}}
	sends := n / 3 // a send, its ack, its poll
	step := span / time.Duration(sends+1)
	fi := 0
	for i := 0; i < sends; i++ {
		t := time.Duration(i+1) * step
		for fi < len(faults) && faults[fi].Time <= t {
			s.add(faults[fi])
			fi++
		}
		s.send(i, t, faulted(faults, t))
	}
	for ; fi < len(faults); fi++ {
		s.add(faults[fi])
	}
	s.final(span)
	return s.ops
}

func (s *synth) add(op history.Op) {
	op.Index = int64(len(s.ops))
	s.ops = append(s.ops, op)
}

func (s *synth) send(i int, t time.Duration, slow bool) {
	proc := fmt.Sprintf("producer-%d", i%3)
	p := int32(i % 2)
	v := fmt.Sprintf("%s-%d", proc, i/3)
	lat := time.Duration(1+s.rng.ExpFloat64()*2) * time.Millisecond
	if slow {
		lat += time.Duration(s.rng.Intn(3000)) * time.Millisecond
	}
	off := s.next[p]
	s.next[p]++
	s.add(history.Op{Time: t, Kind: history.Send, Process: proc, Topic: "verify", Partition: p, Offset: -1, Value: v})
	s.add(history.Op{Time: t + lat, Kind: history.Ack, Process: proc, Topic: "verify", Partition: p, Offset: off, Value: v, Latency: lat})
	s.add(history.Op{Time: t + lat + time.Millisecond, Kind: history.Poll, Process: "consumer-1", Topic: "verify", Partition: p, Offset: off, Value: v, Batch: int64(i)})
}

func (s *synth) final(span time.Duration) {
	for p := int32(0); p < 2; p++ {
		s.add(history.Op{Time: span, Kind: history.Final, Process: "final", Topic: "verify", Partition: p, Offset: s.next[p]})
		for o := int64(0); o < s.next[p] && o < 50; o++ {
			s.add(history.Op{Time: span, Kind: history.Poll, Process: "final", Topic: "verify", Partition: p, Offset: o, Value: "x"})
		}
	}
}

func faulted(faults []history.Op, t time.Duration) bool {
	open := 0
	for _, f := range faults {
		if f.Time > t {
			break
		}
		switch f.Kind {
		case history.FaultStart:
			open++
		case history.FaultEnd:
			open--
		}
	}
	return open > 0
}

// faultOps is a schedule over span: kills, pauses, a partition that
// overlaps a kill, a leader election (instant), one never ended.
func faultOps(span time.Duration) []history.Op {
	at := func(f float64) time.Duration { return time.Duration(f * float64(span)) }
	f := func(t time.Duration, k history.Kind, fault string, nodes ...int32) history.Op {
		return history.Op{Time: t, Kind: k, Process: "nemesis", Fault: fault, Nodes: nodes, Offset: -1}
	}
	return []history.Op{
		f(at(0.10), history.FaultStart, "kill", 2),
		f(at(0.15), history.FaultEnd, "kill", 2),
		f(at(0.25), history.FaultStart, "pause", 3),
		f(at(0.30), history.FaultStart, "partition", 1, 3),
		f(at(0.32), history.FaultEnd, "pause", 3),
		f(at(0.40), history.FaultEnd, "partition", 1, 3),
		f(at(0.50), history.FaultStart, "leader-election"),
		f(at(0.50), history.FaultEnd, "leader-election"),
		f(at(0.60), history.FaultStart, "kill", 1),
		f(at(0.66), history.FaultEnd, "kill", 1),
		f(at(0.90), history.FaultStart, "clock-jump", 2),
	}
}

// oneOfEach is a Result with one anomaly of every kind the checker names
// (and one it may name later), built by hand from ops of h.
func oneOfEach(h []history.Op) checker.Result {
	var as []checker.Anomaly
	for i, k := range append(append([]string(nil), anomalyKinds...), "future-kind") {
		op := h[3*i+1] // an ack
		as = append(as, checker.Anomaly{
			Kind: k, Topic: op.Topic, Partition: op.Partition,
			Offsets: []int64{op.Offset, op.Offset + 1},
			Values:  []string{op.Value, "<b>not bold</b>"},
			Ops:     []history.Op{h[3*i], op, h[3*i+2]},
			Explain: fmt.Sprintf("%s of value %s (explained by the checker)", k, op.Value),
		})
	}
	return checker.Result{Anomalies: as, Stats: statsOf(h)}
}

// statsOf counts h as the checker's Stats do.
func statsOf(h []history.Op) checker.Stats {
	st := checker.Stats{FaultsByKind: map[string]int64{}}
	for _, op := range h {
		switch op.Kind {
		case history.Send:
			st.Sends++
		case history.Ack:
			st.Acks++
		case history.Fail:
			st.Fails++
		case history.Info:
			st.Infos++
		case history.Poll:
			if op.Process == "final" {
				st.FinalReads++
			} else {
				st.Polls++
			}
		case history.Commit:
			st.Commits++
		case history.TxnCommit:
			st.TxnCommits++
		case history.TxnAbort:
			st.TxnAborts++
		case history.FaultStart:
			st.Faults++
			st.FaultsByKind[op.Fault]++
		}
	}
	return st
}

var testMeta = Meta{
	Command:  "sluice verify --workload queue --seed 7 --faults kill,pause,partition --results RESULTS",
	Workload: "queue",
	Seed:     7,
	Cluster:  "3 local nodes, RF 3, min.insync.replicas 2",
	Started:  time.Date(2026, 12, 4, 19, 0, 0, 0, time.UTC),
	Duration: 2 * time.Minute,
	Schedule: "kill, pause, partition, leader-election, clock-jump every ~10 s (seed 7)",
}
