package checker

import (
	"fmt"
	"strings"
)

// lostWrites finds the acknowledged values no reader saw though a reader
// read past them, and those consumers saw but the final read, which read
// past them, did not. It returns the count of acknowledged values nobody
// saw nor read past (Jepsen's unseen).
func (x *index) lostWrites(c *collector) (unseen int64) {
	for v := range x.vals {
		vi := &x.vals[v]
		if !vi.judged {
			continue
		}
		pid, off, ok := x.ackedAt(vi)
		if !ok {
			continue
		}
		p := x.parts[pid]
		finalPast := p.finalHW > off || p.finalMaxRead > off
		switch {
		case vi.read < 0 && vi.final < 0:
			// A consumer's reads say nothing of a value with no offset.
			if (off >= 0 && p.maxRead > off) || finalPast {
				c.add(x.neverRead(int32(v), pid, off))
			} else {
				unseen++
			}
		case vi.final < 0 && finalPast:
			c.add(x.lostAfterRead(int32(v), pid, off))
		}
	}
	return unseen
}

// ackedAt says where an acknowledged value is: its Ack's offset, or for
// a committed transaction's value with no offset, the partition it was
// sent to with offset -1 (a final read of that partition must hold it).
func (x *index) ackedAt(vi *valInfo) (part int32, off int64, ok bool) {
	if vi.ack >= 0 {
		op := &x.ops[vi.ack]
		return x.part(op.Topic, op.Partition), op.Offset, true
	}
	if vi.send < 0 {
		return 0, 0, false
	}
	op := &x.ops[vi.send]
	if op.Txn == "" || op.Topic == "" || op.Partition < 0 {
		return 0, 0, false
	}
	return x.part(op.Topic, op.Partition), -1, true
}

// ackWords says how a value was acknowledged: "acknowledged at offset 12
// of t-0 at 1.2 s" or "committed in transaction txn-1-4".
func (x *index) ackWords(vi *valInfo, p *plog, off int64) string {
	if vi.ack >= 0 {
		return fmt.Sprintf("acknowledged at offset %d of %s at %s", off, partName(p.topic, p.partition), secs(x.ops[vi.ack]))
	}
	return fmt.Sprintf("sent to %s in committed transaction %s", partName(p.topic, p.partition), x.ops[vi.send].Txn)
}

func (x *index) neverRead(v, pid int32, off int64) Anomaly {
	vi, p := &x.vals[v], x.parts[pid]
	var past []string
	if off >= 0 && p.maxRead > off {
		past = append(past, fmt.Sprintf("%s read offset %d at %s", x.ops[p.maxReadOp].Process, p.maxRead, secs(x.ops[p.maxReadOp])))
	}
	if reach := max(p.finalHW, p.finalMaxRead+1); reach > off {
		past = append(past, fmt.Sprintf("the final read reached offset %d", reach))
	}
	name := x.ops[pick(vi.send, vi.ack)].Value
	return Anomaly{
		Kind: LostWrite, Topic: p.topic, Partition: p.partition,
		Offsets: offsetsOf(off), Values: []string{name},
		Ops:     x.opsAt(vi.send, vi.ack, p.maxReadOp, p.finalOp),
		Explain: fmt.Sprintf("value %s %s was never read; %s", name, x.ackWords(vi, p, off), strings.Join(past, ", ")),
	}
}

func (x *index) lostAfterRead(v, pid int32, off int64) Anomaly {
	vi, p := &x.vals[v], x.parts[pid]
	name := x.ops[vi.read].Value
	return Anomaly{
		Kind: LostWrite, Topic: p.topic, Partition: p.partition,
		Offsets: offsetsOf(off), Values: []string{name},
		Ops: x.opsAt(vi.send, vi.ack, vi.read, p.finalOp),
		Explain: fmt.Sprintf("value %s %s was %s but is missing from the final read, which reached offset %d",
			name, x.ackWords(vi, p, off), x.how(vi.read), max(p.finalHW, p.finalMaxRead+1)),
	}
}

// pick returns the first position that is not -1.
func pick(ps ...int32) int32 {
	for _, p := range ps {
		if p >= 0 {
			return p
		}
	}
	return -1
}

func offsetsOf(off int64) []int64 {
	if off < 0 {
		return nil
	}
	return []int64{off}
}

// duplicates reports each value found at two or more offsets.
func (x *index) duplicates(c *collector) {
	for _, v := range x.dupOrder {
		vi := &x.vals[v]
		locs := append([]loc{vi.first}, x.extraLocs[v]...)
		p := x.parts[vi.first.part]
		a := Anomaly{Kind: Duplicate, Topic: p.topic, Partition: p.partition, Values: []string{x.ops[vi.first.op].Value}}
		pos := []int32{vi.send}
		var where []string
		for _, l := range locs {
			lp := x.parts[l.part]
			a.Offsets = append(a.Offsets, l.off)
			pos = append(pos, l.op)
			where = append(where, fmt.Sprintf("offset %d of %s (%s)", l.off, partName(lp.topic, lp.partition), x.how(l.op)))
		}
		a.Ops = x.opsAt(pos...)
		a.Explain = fmt.Sprintf("value %s is at %d offsets: %s", a.Values[0], len(locs), strings.Join(where, ", "))
		c.add(a)
	}
}

// inconsistentOffsets reports each offset acknowledged or read with two
// or more values.
func (x *index) inconsistentOffsets(c *collector) {
	for _, k := range x.clashOrder {
		p := x.parts[k.part]
		vs := append([]int32{p.at(k.off)}, x.clash[k]...)
		a := Anomaly{Kind: InconsistentOffsets, Topic: p.topic, Partition: p.partition, Offsets: []int64{k.off}}
		var pos []int32
		var what []string
		for _, v := range vs {
			i := x.placedBy(v, k)
			pos = append(pos, i)
			name := x.ops[i].Value
			a.Values = append(a.Values, name)
			what = append(what, fmt.Sprintf("%s (%s)", name, x.how(i)))
		}
		a.Ops = x.opsAt(pos...)
		a.Explain = fmt.Sprintf("offset %d of %s holds %d values: %s", k.off, partName(p.topic, p.partition), len(vs), strings.Join(what, " and "))
		c.add(a)
	}
}

// placedBy returns the op that first put value v at k.
func (x *index) placedBy(v int32, k offKey) int32 {
	vi := &x.vals[v]
	if vi.first.part == k.part && vi.first.off == k.off {
		return vi.first.op
	}
	for _, l := range x.extraLocs[v] {
		if l.part == k.part && l.off == k.off {
			return l.op
		}
	}
	return vi.first.op
}
