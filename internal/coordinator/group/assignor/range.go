package assignor

import (
	"cmp"
	"slices"
)

type rangeAssignor struct{}

func (rangeAssignor) Name() string { return RangeName }

// Assign follows Kafka's RangeAssignor: members are ordered static members
// first (by instance id), then dynamic ones (by member id); each topic's
// partitions are cut into contiguous ranges, one per subscriber in that
// order, the first partitions%subscribers ranges one longer. Topics with
// the same subscribers and partition count are cut alike, so a member gets
// the same partition numbers of co-partitioned topics. Like Kafka 4.4's, it
// ignores the current assignment: the ranges depend only on members and
// topics.
func (rangeAssignor) Assign(spec Spec) (map[string]Assignment, error) {
	p, err := newPlan(spec, false)
	if err != nil {
		return nil, err
	}
	order := make([]int32, len(p.members))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &p.members[a], &p.members[b]
		if (x.InstanceID != "") != (y.InstanceID != "") {
			if x.InstanceID != "" {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(x.InstanceID, y.InstanceID); c != 0 {
			return c
		}
		return cmp.Compare(a, b) // members are in ID order
	})
	subscribers := make([]int32, len(p.topics))
	for m := range p.members {
		for _, t := range p.memberSubs(m) {
			subscribers[t]++
		}
	}
	next := make([]int32, len(p.topics))  // first partition of the next range
	taken := make([]int32, len(p.topics)) // ranges handed out
	for _, m := range order {
		for _, t := range p.memberSubs(int(m)) {
			tp := p.topics[t]
			quota := tp.parts / subscribers[t]
			if taken[t] < tp.parts%subscribers[t] {
				quota++
			}
			taken[t]++
			for q := next[t]; q < next[t]+quota; q++ {
				p.assign(tp.first+q, m)
			}
			next[t] += quota
		}
	}
	return p.result(), nil
}
