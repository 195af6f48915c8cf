package balance

import "slices"

// balanceLeaders evens the preferred leaders over the targets by
// reordering replica lists (a leadership moves, no data does): while a
// target leads more than the upper bound or fewer than the lower one, a
// partition it leads gets its least-leading replica first, or a partition
// it follows gets it first. Each swap narrows a gap of at least two, so
// the loop ends.
func (p *planner) balanceLeaders() {
	total := 0
	for _, t := range p.targets {
		total += p.brokers[t].leaders
	}
	lo, hi := bounds(float64(total)/float64(len(p.targets)), p.opts.Tolerance)
	p.levelOut(func(b int) int { return p.brokers[b].leaders }, lo, hi,
		func(b int) bool { return p.shiftLeader(b) || p.chainLeader(b) },
		func(b int) bool { return p.pullLeader(b) || p.chainPull(b) })
}

// shiftLeader hands one of src's leaderships to the replica that leads the
// fewest partitions, if it leads at least two fewer than src.
func (p *planner) shiftLeader(src int) bool {
	bestP, bestSlot := -1, -1
	for _, pi32 := range p.brokers[src].hosted {
		pi := int(pi32)
		pt := &p.parts[pi]
		if pt.pinned || pt.replicas[0] != src {
			continue
		}
		for j := 1; j < len(pt.replicas); j++ {
			b := pt.replicas[j]
			if p.brokers[b].state != Alive || p.brokers[b].leaders+1 >= p.brokers[src].leaders {
				continue
			}
			if bestP < 0 || p.brokers[b].leaders < p.brokers[p.parts[bestP].replicas[bestSlot]].leaders {
				bestP, bestSlot = pi, j
			}
		}
	}
	if bestP < 0 {
		return false
	}
	p.swapLeader(bestP, bestSlot)
	return true
}

// pullLeader gives dst the leadership of a partition it follows, taken from
// the leader that leads the most, if it leads at least two more than dst.
func (p *planner) pullLeader(dst int) bool {
	bestP, bestSlot := -1, -1
	for _, pi32 := range p.brokers[dst].hosted {
		pi := int(pi32)
		pt := &p.parts[pi]
		lead := pt.replicas[0]
		if pt.pinned || lead == dst || p.brokers[lead].state != Alive || p.brokers[lead].leaders <= p.brokers[dst].leaders+1 {
			continue
		}
		if bestP < 0 || p.brokers[lead].leaders > p.brokers[p.parts[bestP].replicas[0]].leaders {
			for j, b := range pt.replicas {
				if b == dst {
					bestP, bestSlot = pi, j
				}
			}
		}
	}
	if bestP < 0 {
		return false
	}
	p.swapLeader(bestP, bestSlot)
	return true
}

// swapLeader makes the replica at slot the preferred leader of pi.
func (p *planner) swapLeader(pi, slot int) {
	pt := &p.parts[pi]
	p.brokers[pt.replicas[0]].leaders--
	p.brokers[pt.replicas[slot]].leaders++
	pt.replicas[0], pt.replicas[slot] = pt.replicas[slot], pt.replicas[0]
	pt.changed = true
}

// chainLeader hands one of src's leaderships on through a middle broker
// when no follower of src leads two fewer: src's partition goes to a
// follower b leading one fewer, and one of b's partitions to a follower c
// leading two fewer than src. b keeps its count; src and c close in.
func (p *planner) chainLeader(src int) bool {
	for _, pi32 := range p.brokers[src].hosted {
		pi := int(pi32)
		pt := &p.parts[pi]
		if pt.pinned || pt.replicas[0] != src {
			continue
		}
		for j := 1; j < len(pt.replicas); j++ {
			b := pt.replicas[j]
			if p.brokers[b].state != Alive || p.brokers[b].leaders >= p.brokers[src].leaders {
				continue
			}
			if qi, k := p.handOff(b, src, pi); qi >= 0 {
				p.swapLeader(pi, j)
				p.swapLeader(qi, k)
				return true
			}
		}
	}
	return false
}

// handOff finds a partition b leads (not skip) with an alive follower,
// neither src nor b, leading at least two fewer than src.
func (p *planner) handOff(b, src, skip int) (int, int) {
	for _, qi32 := range p.brokers[b].hosted {
		qi := int(qi32)
		qt := &p.parts[qi]
		if qi == skip || qt.pinned || qt.replicas[0] != b {
			continue
		}
		for k := 1; k < len(qt.replicas); k++ {
			c := qt.replicas[k]
			if c != src && p.brokers[c].state == Alive && p.brokers[c].leaders+1 < p.brokers[src].leaders {
				return qi, k
			}
		}
	}
	return -1, -1
}

// chainPull is chainLeader's mirror: dst takes the leadership of a
// partition led by b (leading more than dst), and b takes one from a
// broker leading at least two more than dst.
func (p *planner) chainPull(dst int) bool {
	for _, qi32 := range p.brokers[dst].hosted {
		qi := int(qi32)
		qt := &p.parts[qi]
		b := qt.replicas[0]
		if qt.pinned || b == dst || p.brokers[b].state != Alive || p.brokers[b].leaders <= p.brokers[dst].leaders {
			continue
		}
		for _, pi32 := range p.brokers[b].hosted {
			pi := int(pi32)
			pt := &p.parts[pi]
			a := pt.replicas[0]
			if pi == qi || pt.pinned || a == b || a == dst || p.brokers[a].state != Alive || p.brokers[a].leaders <= p.brokers[dst].leaders+1 {
				continue
			}
			p.swapLeader(qi, slices.Index(qt.replicas, dst))
			p.swapLeader(pi, slices.Index(pt.replicas, b))
			return true
		}
	}
	return false
}
