package assignor

import "slices"

// balancer is Kafka's MemberAssignmentBalancer: over one topic's
// subscribers sorted by load, it hands out the least loaded members round
// by round (every member at the lowest load, then every member at the next
// load, ...) and likewise the most loaded from the top, reading the live
// sizes so that moves made between calls count.
type balancer struct {
	sizes  []int32
	sorted []int32
	keys   []uint64 // sort scratch: size<<32 | member
	counts []int32  // sort scratch: members per size

	leastEnd, leastCount, nextLeast int
	mostStart, mostEnd, mostCount   int
	nextMost                        int
}

// initialize starts over with members (ascending member indexes) and
// returns the spread between the most and the least loaded of them.
func (b *balancer) initialize(members []int32) int32 {
	b.sortByLoad(members)
	n := len(b.sorted)
	b.leastEnd = 0
	b.leastCount = int(b.sizes[b.sorted[0]]) - 1
	b.nextLeast = 0
	b.mostStart, b.mostEnd = n, n
	b.mostCount = int(b.sizes[b.sorted[n-1]]) + 1
	b.nextMost = n - 1
	return b.sizes[b.sorted[n-1]] - b.sizes[b.sorted[0]]
}

// sortByLoad fills sorted with members ordered by (size, index). Loads
// usually span a few partitions, so a counting sort by size (stable, the
// members being ascending already) does it in linear time; a wide spread
// falls back to sorting packed (size, member) keys.
func (b *balancer) sortByLoad(members []int32) {
	lo, hi := b.sizes[members[0]], b.sizes[members[0]]
	for _, m := range members[1:] {
		lo, hi = min(lo, b.sizes[m]), max(hi, b.sizes[m])
	}
	b.sorted = b.sorted[:0]
	if int(hi-lo) < len(members) && slices.IsSorted(members) {
		b.counts = append(b.counts[:0], make([]int32, hi-lo+2)...)
		for _, m := range members {
			b.counts[b.sizes[m]-lo+1]++
		}
		for i := 1; i < len(b.counts); i++ {
			b.counts[i] += b.counts[i-1]
		}
		b.sorted = slices.Grow(b.sorted, len(members))[:len(members)]
		for _, m := range members {
			k := b.sizes[m] - lo
			b.sorted[b.counts[k]] = m
			b.counts[k]++
		}
		return
	}
	b.keys = b.keys[:0]
	for _, m := range members {
		b.keys = append(b.keys, uint64(b.sizes[m])<<32|uint64(m))
	}
	slices.Sort(b.keys)
	for _, k := range b.keys {
		b.sorted = append(b.sorted, int32(uint32(k)))
	}
}

// spread is what initialize(members) would return, without sorting.
func (b *balancer) spread(members []int32) int32 {
	lo, hi := b.sizes[members[0]], b.sizes[members[0]]
	for _, m := range members[1:] {
		lo, hi = min(lo, b.sizes[m]), max(hi, b.sizes[m])
	}
	return hi - lo
}

// nextLeastLoaded returns the next member of the least loaded range,
// widening the range to the next load once every member in it had a turn.
func (b *balancer) nextLeastLoaded() int32 {
	if b.nextLeast >= b.leastEnd {
		b.leastCount++
		for b.leastEnd < len(b.sorted) && int(b.sizes[b.sorted[b.leastEnd]]) == b.leastCount {
			b.leastEnd++
		}
		b.nextLeast = 0
	}
	m := b.sorted[b.nextLeast]
	b.nextLeast++
	return m
}

// nextMostLoaded is nextLeastLoaded from the top; -1 when no member is left.
func (b *balancer) nextMostLoaded() int32 {
	if b.nextMost < b.mostStart {
		if b.mostEnd <= b.mostStart && b.mostStart > 0 {
			b.mostCount = int(b.sizes[b.sorted[b.mostStart-1]])
		} else {
			b.mostCount--
		}
		for b.mostStart > 0 && int(b.sizes[b.sorted[b.mostStart-1]]) == b.mostCount {
			b.mostStart--
		}
		b.nextMost = b.mostEnd - 1
	}
	if b.nextMost < 0 {
		return -1
	}
	m := b.sorted[b.nextMost]
	b.nextMost--
	return m
}

// excludeMostLoaded drops the member nextMostLoaded just returned (it holds
// nothing left to give) from the most loaded range for good.
func (b *balancer) excludeMostLoaded() {
	i, j := b.nextMost+1, b.mostEnd-1
	b.sorted[i], b.sorted[j] = b.sorted[j], b.sorted[i]
	b.mostEnd--
}

func (b *balancer) balanced() bool { return b.mostCount-b.leastCount <= 1 }
