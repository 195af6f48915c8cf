package balance

import (
	"cmp"
	"slices"
)

// balanceBytes evens the targets' bytes once counts are within bounds:
// while the heaviest or the lightest broker is outside the tolerance, a
// replica moves from the heaviest to the lightest (when the counts allow)
// or a large replica of the heaviest trades places with a small one of
// the lightest. Each step shrinks the gap between the two, so the sum of
// squares falls and the loop ends; it also stops when no step helps.
func (p *planner) balanceBytes() {
	var total int64
	for _, t := range p.targets {
		total += p.brokers[t].bytes
	}
	mean := float64(total) / float64(len(p.targets))
	slack := int64(mean * p.opts.Tolerance)
	lo, hi := p.countBounds()
	for range len(p.parts) + 1 {
		heavy, light := p.targets[0], p.targets[0]
		for _, t := range p.targets {
			if p.brokers[t].bytes > p.brokers[heavy].bytes {
				heavy = t
			}
			if p.brokers[t].bytes < p.brokers[light].bytes {
				light = t
			}
		}
		h, l := &p.brokers[heavy], &p.brokers[light]
		if float64(h.bytes) <= mean+float64(slack) && float64(l.bytes) >= mean-float64(slack) {
			return
		}
		gap := h.bytes - l.bytes
		if h.replicas-1 >= lo && l.replicas+1 <= hi && p.byteMove(heavy, light, gap) {
			continue
		}
		if !p.byteSwap(heavy, light, gap) {
			return
		}
	}
}

// byteMove moves the replica of heavy whose size is nearest half the gap
// (and under the whole gap, so the two do not swap roles) to light.
func (p *planner) byteMove(heavy, light int, gap int64) bool {
	best, bestSlot, bestAt := -1, -1, -1
	var bestScore int64
	for at, pi32 := range p.brokers[heavy].hosted {
		pi := int(pi32)
		pt := &p.parts[pi]
		if pt.pinned || pt.size <= 0 || pt.size >= gap {
			continue
		}
		slot := slices.Index(pt.replicas, heavy)
		if !p.canTake(pi, slot, light) {
			continue
		}
		if score := abs(pt.size - gap/2); best < 0 || score < bestScore {
			best, bestSlot, bestAt, bestScore = pi, slot, at, score
		}
	}
	if best < 0 {
		return false
	}
	p.move(best, bestSlot, light, bestAt)
	return true
}

// swapCandidates bounds how many of heavy's replicas byteSwap weighs.
const swapCandidates = 256

// byteSwap trades a replica of heavy for a smaller one of light, the size
// difference nearest half the gap and under the whole gap.
func (p *planner) byteSwap(heavy, light int, gap int64) bool {
	movable := func(b int) []int {
		var out []int
		for _, pi := range p.brokers[b].hosted {
			if !p.parts[pi].pinned {
				out = append(out, int(pi))
			}
		}
		return out
	}
	big, small := movable(heavy), movable(light)
	bySize := func(a, b int) int { return cmp.Or(cmp.Compare(p.parts[a].size, p.parts[b].size), a-b) }
	slices.SortFunc(big, func(a, b int) int { return bySize(b, a) })
	slices.SortFunc(small, bySize)
	bestP, bestQ := -1, -1
	var bestScore int64
	for _, pi := range big[:min(len(big), swapCandidates)] {
		sp := p.parts[pi].size
		// The q nearest sp-gap/2 in size, then its neighbours.
		at, _ := slices.BinarySearchFunc(small, sp-gap/2, func(q int, v int64) int { return cmp.Compare(p.parts[q].size, v) })
		for k := max(0, at-2); k < min(len(small), at+2); k++ {
			qi := small[k]
			d := sp - p.parts[qi].size
			if d <= 0 || d >= gap || !p.canSwap(pi, qi, heavy, light) {
				continue
			}
			if score := abs(d - gap/2); bestP < 0 || score < bestScore {
				bestP, bestQ, bestScore = pi, qi, score
			}
		}
	}
	if bestP < 0 {
		return false
	}
	p.move(bestP, slices.Index(p.parts[bestP].replicas, heavy), light, -1)
	p.move(bestQ, slices.Index(p.parts[bestQ].replicas, light), heavy, -1)
	return true
}

// canSwap reports whether pi can go from heavy to light and qi from light
// to heavy.
func (p *planner) canSwap(pi, qi, heavy, light int) bool {
	return pi != qi &&
		p.canTake(pi, slices.Index(p.parts[pi].replicas, heavy), light) &&
		p.canTake(qi, slices.Index(p.parts[qi].replicas, light), heavy)
}
