package assignor

import "slices"

// result turns the owners into every member's Assignment. Each member's
// partitions land in one shared array, grouped by topic and ascending (a
// counting sort over the owners); a member whose partitions equal its
// Current gets the Current map back, so an unchanged member costs no
// allocation.
func (p *plan) result() map[string]Assignment {
	n := len(p.members)
	// start[m] is where member m's partitions begin in flat; topicsOf[m]
	// counts the distinct topics it gets, to size its map.
	start := make([]int32, n+1)
	topicsOf := make([]int32, n)
	last := make([]int32, n)
	for i := range last {
		last[i] = -1
	}
	for t, tp := range p.topics {
		for _, m := range p.owner[tp.first : tp.first+tp.parts] {
			if m < 0 {
				continue
			}
			start[m+1]++
			if last[m] != int32(t) {
				last[m] = int32(t)
				topicsOf[m]++
			}
		}
	}
	for m := range n {
		start[m+1] += start[m]
	}
	flat := make([]int32, start[n])
	topicOf := make([]int32, start[n])
	next := last // reused: the write position of each member
	copy(next, start[:n])
	for t, tp := range p.topics {
		for q, m := range p.owner[tp.first : tp.first+tp.parts] {
			if m < 0 {
				continue
			}
			flat[next[m]] = int32(q)
			topicOf[next[m]] = int32(t)
			next[m]++
		}
	}
	out := make(map[string]Assignment, n)
	for m, mem := range p.members {
		lo, hi := start[m], start[m+1]
		out[mem.ID] = p.memberAssignment(mem.Current, flat[lo:hi:hi], topicOf[lo:hi:hi], int(topicsOf[m]))
	}
	return out
}

// memberAssignment builds one member's map from its partitions (grouped by
// topic, ascending), or returns current when it holds the same.
func (p *plan) memberAssignment(current Assignment, parts, topics []int32, ntopics int) Assignment {
	if sameAssignment(p, current, parts, topics, ntopics) {
		if current == nil {
			return Assignment{}
		}
		return current
	}
	a := make(Assignment, ntopics)
	for i := 0; i < len(parts); {
		j := i + 1
		for j < len(parts) && topics[j] == topics[i] {
			j++
		}
		a[p.topics[topics[i]].id] = parts[i:j:j]
		i = j
	}
	return a
}

func sameAssignment(p *plan, current Assignment, parts, topics []int32, ntopics int) bool {
	if len(current) != ntopics {
		return false
	}
	for i := 0; i < len(parts); {
		j := i + 1
		for j < len(parts) && topics[j] == topics[i] {
			j++
		}
		if !slices.Equal(current[p.topics[topics[i]].id], parts[i:j]) {
			return false
		}
		i = j
	}
	return true
}
