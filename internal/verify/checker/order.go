package checker

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// procPart names one process's view of one partition.
type procPart struct {
	process string
	part    int32
}

// nonmonotonicSends reports, per producer and partition, each value
// acknowledged at a lower offset than the value that producer sent
// before it: an idempotent producer keeps its order in a partition.
func (x *index) nonmonotonicSends(c *collector) {
	type last struct {
		off int64
		v   int32
	}
	prev := map[procPart]last{}
	for _, v := range x.sendOrder {
		vi := &x.vals[v]
		if vi.ack < 0 || !vi.judged {
			continue
		}
		op := &x.ops[vi.send]
		ack := &x.ops[vi.ack]
		k := procPart{op.Process, x.part(ack.Topic, ack.Partition)}
		if l, ok := prev[k]; ok && ack.Offset < l.off {
			c.add(x.reordered(l.v, v))
		}
		prev[k] = last{ack.Offset, v}
	}
}

func (x *index) reordered(before, after int32) Anomaly {
	b, a := &x.vals[before], &x.vals[after]
	ab, aa := x.ops[b.ack], x.ops[a.ack]
	return Anomaly{
		Kind: NonmonotonicSend, Topic: aa.Topic, Partition: aa.Partition,
		Offsets: []int64{ab.Offset, aa.Offset}, Values: []string{ab.Value, aa.Value},
		Ops: x.opsAt(b.send, b.ack, a.send, a.ack),
		Explain: fmt.Sprintf("%s sent %s (at %s) before %s (at %s), but they sit at offsets %d and %d of %s: reordered",
			x.ops[b.send].Process, ab.Value, secs(x.ops[b.send]), aa.Value, secs(x.ops[a.send]), ab.Offset, aa.Offset, partName(aa.Topic, aa.Partition)),
	}
}

// pollPos is where a consumer last read a partition.
type pollPos struct {
	off   int64
	op    int32
	epoch int32 // the consumer's assignment count when read
}

// polls checks each consumer's reads of each partition while its
// assignment stays the same (an Assign op starts afresh): each read must
// be past the one before (else nonmonotonic-poll) and must not jump over
// an offset that holds a value some reader saw (else poll-skip). Offsets
// no reader saw a value at (transaction markers, aborted records) may be
// jumped. Final readers are judged by the lost-write check instead.
func (x *index) polls(c *collector) {
	epochs := map[string]int32{}
	pos := map[procPart]pollPos{}
	for i := range x.ops {
		op := &x.ops[i]
		if op.Kind == history.Assign {
			epochs[op.Process]++
			continue
		}
		if op.Kind != history.Poll || op.Offset < 0 || x.finals[op.Process] {
			continue
		}
		pid := x.part(op.Topic, op.Partition)
		k := procPart{op.Process, pid}
		e := epochs[op.Process]
		if prev, ok := pos[k]; ok && prev.epoch == e {
			switch {
			case op.Offset <= prev.off:
				c.add(x.nonmonotonicPoll(prev.op, int32(i)))
			case op.Offset > prev.off+1 && x.parts[pid].seenIn(prev.off+1, op.Offset):
				c.add(x.pollSkip(pid, prev.op, int32(i)))
			}
		}
		pos[k] = pollPos{off: op.Offset, op: int32(i), epoch: e}
	}
}

func (x *index) nonmonotonicPoll(prev, cur int32) Anomaly {
	a, b := x.ops[prev], x.ops[cur]
	verb := "went back to"
	if b.Offset == a.Offset {
		verb = "read again"
	}
	return Anomaly{
		Kind: NonmonotonicPoll, Topic: b.Topic, Partition: b.Partition,
		Offsets: []int64{a.Offset, b.Offset}, Values: []string{a.Value, b.Value},
		Ops: x.opsAt(prev, cur),
		Explain: fmt.Sprintf("%s read offset %d of %s (%s) at %s, then %s offset %d (%s) at %s without a new assignment",
			b.Process, a.Offset, partName(b.Topic, b.Partition), a.Value, secs(a), verb, b.Offset, b.Value, secs(b)),
	}
}

func (x *index) pollSkip(pid, prev, cur int32) Anomaly {
	a, b := x.ops[prev], x.ops[cur]
	p := x.parts[pid]
	skipped := p.seenOffsets(a.Offset+1, b.Offset, maxOps-2)
	an := Anomaly{Kind: PollSkip, Topic: b.Topic, Partition: b.Partition, Offsets: []int64{a.Offset}}
	pos := []int32{prev}
	var names []string
	for _, off := range skipped {
		v := p.at(off)
		if v == noValue {
			continue
		}
		an.Offsets = append(an.Offsets, off)
		i := x.placedBy(v, offKey{pid, off})
		names = append(names, x.ops[i].Value)
		pos = append(pos, x.seenBy(v, i))
	}
	an.Offsets = append(an.Offsets, b.Offset)
	an.Values = append(append([]string{a.Value}, names...), b.Value)
	an.Ops = x.opsAt(append(pos, cur)...)
	more := ""
	if len(skipped) == maxOps-2 {
		more = " and more"
	}
	an.Explain = fmt.Sprintf("%s read offset %d of %s at %s, then offset %d at %s, skipping offsets %v%s that hold values other readers saw (%v)",
		b.Process, a.Offset, partName(b.Topic, b.Partition), secs(a), b.Offset, secs(b), skipped, more, names)
	return an
}

// seenBy returns an op in which a reader read v: its first consumer
// read, else its first final read, else the op that placed it.
func (x *index) seenBy(v, placed int32) int32 {
	vi := &x.vals[v]
	return pick(vi.read, vi.final, placed)
}

// commits reports each acknowledged offset commit of a group for a
// partition below one the group committed before.
func (x *index) commits(c *collector) {
	type groupPart struct {
		group string
		part  int32
	}
	high := map[groupPart]int32{}
	for i := range x.ops {
		op := &x.ops[i]
		if op.Kind != history.Commit || op.Offset < 0 {
			continue
		}
		k := groupPart{op.Group, x.part(op.Topic, op.Partition)}
		h, ok := high[k]
		if !ok || op.Offset > x.ops[h].Offset {
			high[k] = int32(i)
			continue
		}
		if op.Offset < x.ops[h].Offset {
			prev := x.ops[h]
			c.add(Anomaly{
				Kind: CommittedOffsetRegression, Topic: op.Topic, Partition: op.Partition,
				Offsets: []int64{prev.Offset, op.Offset},
				Ops:     x.opsAt(h, int32(i)),
				Explain: fmt.Sprintf("group %s's committed offset for %s went back from %d (committed by %s at %s) to %d (committed by %s at %s)",
					op.Group, partName(op.Topic, op.Partition), prev.Offset, prev.Process, secs(prev), op.Offset, op.Process, secs(*op)),
			})
		}
	}
}
