package assignor

import "fmt"

// uniformHomogeneous is Kafka's UniformHomogeneousAssignmentBuilder for a
// group whose members all subscribe to the same topics. Each member keeps
// its current partitions up to its quota, in topic then partition order;
// what is over quota or unowned goes, in that order, to the members under
// quota, in member order.
func (p *plan) uniformHomogeneous() error {
	if len(p.members) == 0 || len(p.memberSubs(0)) == 0 {
		return nil
	}
	total := len(p.owner)
	unassigned := make([]int32, 0, total)
	for i, m := range p.owner {
		if m < 0 {
			unassigned = append(unassigned, int32(i))
		}
	}
	held, heldStart := p.heldByMember()
	n := len(p.members)
	minQuota := total / n
	extra := total % n // members that may still get one more than minQuota
	type unfilled struct{ member, quota int32 }
	var short []unfilled
	for m := range n {
		quota, hasExtra := minQuota, false
		if extra > 0 {
			quota, hasExtra = quota+1, true
		}
		for _, i := range held[heldStart[m]:heldStart[m+1]] {
			if quota > 0 {
				quota--
				continue
			}
			p.owner[i] = -1
			unassigned = append(unassigned, i)
		}
		// A member below its minimum gives its extra back while enough
		// members remain to take the extras, so that members already
		// holding minQuota+1 keep theirs.
		if quota > 0 && hasExtra && n-m > extra {
			quota--
			hasExtra = false
		}
		if quota > 0 {
			short = append(short, unfilled{int32(m), int32(quota)})
		}
		if hasExtra {
			extra--
		}
	}
	next := 0
	for _, u := range short {
		for range u.quota {
			if next == len(unassigned) {
				break
			}
			p.assign(unassigned[next], u.member)
			next++
		}
	}
	if next < len(unassigned) {
		return fmt.Errorf("assignor: uniform: %d partitions left unassigned", len(unassigned)-next)
	}
	return nil
}

// heldByMember lists each member's owned partitions (flat indexes, so in
// topic then partition order): member m's are held[start[m]:start[m+1]].
func (p *plan) heldByMember() (held, start []int32) {
	start = make([]int32, len(p.members)+1)
	count := 0
	for _, m := range p.owner {
		if m >= 0 {
			start[m+1]++
			count++
		}
	}
	for m := range p.members {
		start[m+1] += start[m]
	}
	held = make([]int32, count)
	next := make([]int32, len(p.members))
	copy(next, start)
	for i, m := range p.owner {
		if m >= 0 {
			held[next[m]] = int32(i)
			next[m]++
		}
	}
	return held, start
}
