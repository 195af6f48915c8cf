package balance

import "slices"

// evacuate moves the replicas of draining brokers, and replicas that break
// the rack rule, to the least loaded broker that can take them. It returns
// the number of draining replicas no broker could take.
func (p *planner) evacuate() int {
	unplaced := 0
	for pi := range p.parts {
		pt := &p.parts[pi]
		if pt.pinned {
			continue
		}
		// From the last slot so a rack violation moves a follower, not the
		// preferred leader.
		for slot := len(pt.replicas) - 1; slot >= 0; slot-- {
			b := &p.brokers[pt.replicas[slot]]
			overRack := p.rackCount(pi, b.rack, slot) >= p.maxPerRack(len(pt.replicas))
			if !b.drain && !overRack {
				continue
			}
			t := p.bestTarget(pi, slot)
			if t < 0 {
				if b.drain {
					unplaced++
				}
				continue
			}
			p.move(pi, slot, t, -1)
		}
	}
	return unplaced
}

// countBounds are the replica count bounds over the targets.
func (p *planner) countBounds() (int, int) {
	total := 0
	for _, t := range p.targets {
		total += p.brokers[t].replicas
	}
	return bounds(float64(total)/float64(len(p.targets)), p.opts.Tolerance)
}

// balanceCounts moves replicas from the fullest brokers to the emptiest
// until every target is within the count bounds. Each move narrows the
// gap between two brokers at least two apart (the sum of squares falls),
// and between moves each broker is marked stuck at most once, so the
// loop ends.
func (p *planner) balanceCounts() {
	lo, hi := p.countBounds()
	p.levelOut(func(b int) int { return p.brokers[b].replicas }, lo, hi, p.pushFrom, p.pullInto)
}

// levelOut is the loop of balanceCounts and balanceLeaders: while a target's
// load is above hi (first) or below lo, it asks push to move load off the
// heaviest such target, or pull to bring some to the lightest, skipping
// targets whose step found nothing until some step succeeds (which changes
// the loads, so a stuck target may move again).
func (p *planner) levelOut(load func(int) int, lo, hi int, push, pull func(int) bool) {
	stuckOver := make([]bool, len(p.brokers))
	stuckUnder := make([]bool, len(p.brokers))
	for {
		over, under := -1, -1
		for _, t := range p.targets {
			if load(t) > hi && !stuckOver[t] && (over < 0 || load(t) > load(over)) {
				over = t
			}
			if load(t) < lo && !stuckUnder[t] && (under < 0 || load(t) < load(under)) {
				under = t
			}
		}
		switch {
		case over >= 0:
			if !push(over) {
				stuckOver[over] = true
				continue
			}
		case under >= 0:
			if !pull(under) {
				stuckUnder[under] = true
				continue
			}
		default:
			return
		}
		clear(stuckOver)
		clear(stuckUnder)
	}
}

// byCount returns the targets ordered by replica count, fewest first
// (heaviest first when desc).
func (p *planner) byCount(desc bool) []int {
	ts := slices.Clone(p.targets)
	slices.SortStableFunc(ts, func(a, b int) int {
		d := p.brokers[a].replicas - p.brokers[b].replicas
		if desc {
			d = -d
		}
		return d
	})
	return ts
}

// pushFrom moves one replica off src to the emptiest broker that can take
// one and holds at least two fewer.
func (p *planner) pushFrom(src int) bool {
	for _, dst := range p.byCount(false) {
		if p.brokers[dst].replicas+1 >= p.brokers[src].replicas {
			return false
		}
		if p.moveOne(src, dst) {
			return true
		}
	}
	return false
}

// pullInto moves one replica onto dst from the fullest broker that can
// give one and holds at least two more.
func (p *planner) pullInto(dst int) bool {
	for _, src := range p.byCount(true) {
		if p.brokers[src].replicas <= p.brokers[dst].replicas+1 {
			return false
		}
		if p.moveOne(src, dst) {
			return true
		}
	}
	return false
}

// candidateWindow bounds how many movable replicas moveOne weighs.
const candidateWindow = 64

// moveOne moves one of src's replicas to dst: among the first movable
// ones (from the end of src's list, where removal is cheap), the one whose
// size best halves the byte gap between them, a follower before a leader.
func (p *planner) moveOne(src, dst int) bool {
	s, d := &p.brokers[src], &p.brokers[dst]
	want := (s.bytes - d.bytes) / 2
	best, bestSlot, bestAt, seen := -1, -1, -1, 0
	var bestScore int64
	for at := len(s.hosted) - 1; at >= 0 && seen < candidateWindow; at-- {
		pi := int(s.hosted[at])
		pt := &p.parts[pi]
		if pt.pinned {
			continue
		}
		slot := slices.Index(pt.replicas, src)
		if !p.canTake(pi, slot, dst) {
			continue
		}
		seen++
		score := int64(0)
		if !p.opts.IgnoreBytes {
			score = abs(pt.size - want)
		}
		if slot == 0 {
			score++ // a follower moves before a leader of the same size
		}
		if best < 0 || score < bestScore {
			best, bestSlot, bestAt, bestScore = pi, slot, at, score
		}
	}
	if best < 0 {
		return false
	}
	p.move(best, bestSlot, dst, bestAt)
	return true
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
