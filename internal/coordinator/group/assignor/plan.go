package assignor

import (
	"encoding/binary"
	"slices"
	"strconv"

	"sluice/internal/kafka"
)

// plan is the working form of a Spec: topics and members by index, and the
// owner of every partition in one flat array. The builders move partitions
// by rewriting owners; result turns the owners back into Assignments. Flat
// arrays keep a computation to a handful of allocations however large the
// group.
type plan struct {
	members []Member
	// topics are the topics some member subscribes to, in Kafka's Uuid
	// order; topic t's partitions are owner[topics[t].first:][:Partitions].
	topics []planTopic
	index  map[kafka.UUID]int32
	// subs[subStart[m]:subStart[m+1]] are member m's topics, ascending.
	subs     []int32
	subStart []int32
	// owner is each partition's member index, -1 when unassigned.
	owner []int32
}

type planTopic struct {
	id    kafka.UUID
	parts int32
	first int32
}

// newPlan indexes the spec. With sticky, each member's Current partitions of
// topics it still subscribes to become its own (the first member in order
// wins a partition two claim; partitions beyond the topic's count are
// dropped); otherwise every partition starts unassigned.
func newPlan(spec Spec, sticky bool) (*plan, error) {
	members, err := sortedMembers(spec.Members)
	if err != nil {
		return nil, err
	}
	p := &plan{members: members, subStart: make([]int32, len(members)+1)}
	if err := p.indexTopics(spec); err != nil {
		return nil, err
	}
	p.indexSubscriptions(spec)
	p.owner = make([]int32, p.partitionCount())
	for i := range p.owner {
		p.owner[i] = -1
	}
	if sticky {
		p.claimCurrent()
	}
	return p, nil
}

// indexTopics collects the known topics some member subscribes to.
func (p *plan) indexTopics(spec Spec) error {
	p.index = make(map[kafka.UUID]int32, len(spec.Topics))
	for _, m := range p.members {
		for _, id := range m.Subscribed {
			t, ok := spec.Topics[id]
			if _, seen := p.index[id]; !ok || seen {
				continue
			}
			if t.Partitions < 0 {
				return &SpecError{Reason: "topic " + id.String() + " has " + strconv.Itoa(int(t.Partitions)) + " partitions"}
			}
			p.index[id] = 0
			p.topics = append(p.topics, planTopic{id: id, parts: t.Partitions})
		}
	}
	slices.SortFunc(p.topics, func(a, b planTopic) int { return compareUUID(a.id, b.id) })
	var first int32
	for i := range p.topics {
		p.topics[i].first = first
		first += p.topics[i].parts
		p.index[p.topics[i].id] = int32(i)
	}
	return nil
}

// indexSubscriptions turns each member's subscribed ids into topic indexes.
func (p *plan) indexSubscriptions(spec Spec) {
	n := 0
	for _, m := range p.members {
		n += len(m.Subscribed)
	}
	p.subs = make([]int32, 0, n)
	for i, m := range p.members {
		start := len(p.subs)
		for _, id := range m.Subscribed {
			if t, ok := p.index[id]; ok {
				p.subs = append(p.subs, t)
			}
		}
		own := p.subs[start:]
		if !slices.IsSorted(own) {
			slices.Sort(own)
		}
		p.subs = p.subs[:start+len(slices.Compact(own))]
		p.subStart[i+1] = int32(len(p.subs))
	}
}

func (p *plan) partitionCount() int {
	if len(p.topics) == 0 {
		return 0
	}
	last := p.topics[len(p.topics)-1]
	return int(last.first + last.parts)
}

// memberSubs returns member m's topic indexes, ascending.
func (p *plan) memberSubs(m int) []int32 { return p.subs[p.subStart[m]:p.subStart[m+1]] }

func (p *plan) subscribes(m int, t int32) bool {
	_, ok := slices.BinarySearch(p.memberSubs(m), t)
	return ok
}

// claimCurrent gives each member the partitions of its Current it may keep.
func (p *plan) claimCurrent() {
	for m := range p.members {
		for id, parts := range p.members[m].Current {
			t, ok := p.index[id]
			if !ok || !p.subscribes(m, t) {
				continue
			}
			tp := p.topics[t]
			for _, q := range parts {
				if q >= 0 && q < tp.parts && p.owner[tp.first+q] < 0 {
					p.owner[tp.first+q] = int32(m)
				}
			}
		}
	}
}

// assign moves flat partition i to member m.
func (p *plan) assign(i, m int32) { p.owner[i] = m }

// compareUUID orders ids as Kafka's Uuid.compareTo does: the two 64-bit
// halves as signed numbers, most significant first.
func compareUUID(a, b kafka.UUID) int {
	for _, off := range [2]int{0, 8} {
		x := int64(binary.BigEndian.Uint64(a[off:]))
		y := int64(binary.BigEndian.Uint64(b[off:]))
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}
