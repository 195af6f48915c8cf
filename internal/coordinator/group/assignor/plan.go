package assignor

import (
	"encoding/binary"
	"slices"
	"strconv"

	"github.com/sluice-io/sluice/internal/kafka"
)

// plan is the working form of a Spec: topics and members by index, and the
// owner of every partition in one flat array. The builders move partitions
// by rewriting owners; result turns the owners back into Assignments. Flat
// arrays keep a computation to a handful of allocations however large the
// group.
type plan struct {
	members []Member
	// topics are the topics some member subscribes to, in Kafka's Uuid
	// order; topic t's partitions are owner[first : first+parts].
	topics []planTopic
	index  map[kafka.UUID]int32
	// subs[subLo[m]:subHi[m]] are member m's topics, ascending. Members
	// subscribing to what the member before them does share its range.
	subs         []int32
	subLo, subHi []int32
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
	p := &plan{members: members, subLo: make([]int32, len(members)), subHi: make([]int32, len(members))}
	if err := p.indexTopics(spec); err != nil {
		return nil, err
	}
	p.owner = make([]int32, p.partitionCount())
	for i := range p.owner {
		p.owner[i] = -1
	}
	if sticky {
		p.claimCurrent()
	}
	return p, nil
}

// indexTopics collects the known topics some member subscribes to and
// turns each member's subscription into topic indexes, with one map lookup
// per subscribed id (none for a member subscribing to what the previous one
// does, the common case). Topics are numbered as met, then renumbered in
// Kafka's Uuid order.
func (p *plan) indexTopics(spec Spec) error {
	p.index = make(map[kafka.UUID]int32, len(spec.Topics))
	n := 0
	for i, m := range p.members {
		if i == 0 || !sameIDs(m.Subscribed, p.members[i-1].Subscribed) {
			n += len(m.Subscribed)
		}
	}
	p.subs = make([]int32, 0, n)
	for i, m := range p.members {
		if i > 0 && sameIDs(m.Subscribed, p.members[i-1].Subscribed) {
			p.subLo[i], p.subHi[i] = p.subLo[i-1], p.subHi[i-1]
			continue
		}
		p.subLo[i] = int32(len(p.subs))
		for _, id := range m.Subscribed {
			t, seen := p.index[id]
			if !seen {
				topic, known := spec.Topics[id]
				if !known {
					continue
				}
				if topic.Partitions < 0 {
					return &SpecError{Reason: "topic " + topic.Name + " (" + id.String() + ") has " + strconv.Itoa(int(topic.Partitions)) + " partitions"}
				}
				t = int32(len(p.topics))
				p.index[id] = t
				p.topics = append(p.topics, planTopic{id: id, parts: topic.Partitions})
			}
			p.subs = append(p.subs, t)
		}
		p.subHi[i] = int32(len(p.subs))
	}
	p.renumberTopics()
	return nil
}

// sameIDs reports whether a and b hold the same ids, cheaply when they are
// the same slice.
func sameIDs(a, b []kafka.UUID) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) == 0 || &a[0] == &b[0] {
		return true
	}
	return slices.Equal(a, b)
}

// renumberTopics sorts the topics in Kafka's Uuid order, lays out their
// partitions in that order, and rewrites the subscriptions to the new
// numbers, each member's ascending and without duplicates.
func (p *plan) renumberTopics() {
	order := make([]int32, len(p.topics))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return compareUUID(p.topics[a].id, p.topics[b].id) })
	sorted := make([]planTopic, len(p.topics))
	renumber := make([]int32, len(p.topics))
	var first int32
	for to, from := range order {
		renumber[from] = int32(to)
		sorted[to] = p.topics[from]
		sorted[to].first = first
		first += sorted[to].parts
		p.index[sorted[to].id] = int32(to)
	}
	p.topics = sorted
	for i := range p.subs {
		p.subs[i] = renumber[p.subs[i]]
	}
	for m := range p.members {
		if m > 0 && sameIDs(p.members[m].Subscribed, p.members[m-1].Subscribed) {
			p.subHi[m] = p.subHi[m-1] // shared, done already
			continue
		}
		own := p.subs[p.subLo[m]:p.subHi[m]]
		if !ascending(own) {
			slices.Sort(own)
			own = slices.Compact(own)
		}
		p.subHi[m] = p.subLo[m] + int32(len(own))
	}
}

// ascending reports whether s is strictly increasing.
func ascending(s []int32) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

func (p *plan) partitionCount() int {
	if len(p.topics) == 0 {
		return 0
	}
	last := p.topics[len(p.topics)-1]
	return int(last.first + last.parts)
}

// memberSubs returns member m's topic indexes, ascending.
func (p *plan) memberSubs(m int) []int32 { return p.subs[p.subLo[m]:p.subHi[m]] }

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
