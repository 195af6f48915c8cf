package assignor

import (
	"cmp"
	"slices"
)

// maxBalanceRounds bounds the passes over the topics when balancing, as
// Kafka's MAX_ITERATION_COUNT does.
const maxBalanceRounds = 16

// hetero is Kafka's UniformHeterogeneousAssignmentBuilder for a group whose
// members subscribe to different topics.
type hetero struct {
	*plan
	// sizes is each member's partition count in the target being built.
	sizes []int32
	// subscribers of topic t: topicSubs[topicSubStart[t]:topicSubStart[t+1]],
	// member indexes ascending.
	topicSubs     []int32
	topicSubStart []int32
	bal           balancer
}

// uniformHeterogeneous keeps each member's current partitions of topics it
// still subscribes to, gives every unassigned partition to the least loaded
// subscriber of its topic, then balances topic by topic.
func (p *plan) uniformHeterogeneous() {
	h := &hetero{plan: p, sizes: make([]int32, len(p.members))}
	for _, m := range p.owner {
		if m >= 0 {
			h.sizes[m]++
		}
	}
	h.indexSubscribers()
	h.bal = balancer{sizes: h.sizes, sorted: make([]int32, 0, len(p.members))}
	h.assignUnassigned()
	h.balance()
}

// indexSubscribers inverts the members' subscriptions.
func (h *hetero) indexSubscribers() {
	h.topicSubStart = make([]int32, len(h.topics)+1)
	for m := range h.members {
		for _, t := range h.memberSubs(m) {
			h.topicSubStart[t+1]++
		}
	}
	for t := range h.topics {
		h.topicSubStart[t+1] += h.topicSubStart[t]
	}
	h.topicSubs = make([]int32, h.topicSubStart[len(h.topics)])
	next := make([]int32, len(h.topics))
	copy(next, h.topicSubStart)
	for m := range h.members {
		for _, t := range h.memberSubs(m) {
			h.topicSubs[next[t]] = int32(m)
			next[t]++
		}
	}
}

func (h *hetero) subscribersOf(t int32) []int32 {
	return h.topicSubs[h.topicSubStart[t]:h.topicSubStart[t+1]]
}

// sortTopics orders topics as Kafka's topicComparator: most partitions per
// subscriber first, then fewer subscribers first, then by id (the index).
func (h *hetero) sortTopics(topics []int32) {
	slices.SortFunc(topics, func(a, b int32) int {
		pa, sa := float64(h.topics[a].parts), float64(len(h.subscribersOf(a)))
		pb, sb := float64(h.topics[b].parts), float64(len(h.subscribersOf(b)))
		if c := cmp.Compare(pb/sb, pa/sa); c != 0 {
			return c
		}
		if c := cmp.Compare(sa, sb); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
}

func (h *hetero) assignUnassigned() {
	var topics []int32
	for t, tp := range h.topics {
		if slices.Contains(h.owner[tp.first:tp.first+tp.parts], -1) {
			topics = append(topics, int32(t))
		}
	}
	h.sortTopics(topics)
	for _, t := range topics {
		tp := h.topics[t]
		h.bal.initialize(h.subscribersOf(t))
		for i := tp.first; i < tp.first+tp.parts; i++ {
			if h.owner[i] < 0 {
				h.move(i, h.bal.nextLeastLoaded())
			}
		}
	}
}

// move gives flat partition i to member m, keeping the sizes.
func (h *hetero) move(i, m int32) {
	if old := h.owner[i]; old >= 0 {
		h.sizes[old]--
	}
	h.owner[i] = m
	h.sizes[m]++
}

// balance passes over the topics with at least two subscribers until a
// whole pass moves nothing (or maxBalanceRounds passes).
func (h *hetero) balance() {
	var topics []int32
	for t := range h.topics {
		if len(h.subscribersOf(int32(t))) >= 2 {
			topics = append(topics, int32(t))
		}
	}
	if len(topics) == 0 {
		return
	}
	h.sortTopics(topics)
	s := balanceScratch{start: make([]int32, len(h.members)), end: make([]int32, len(h.members))}
	lastMoved := -1
	for range maxBalanceRounds {
		for k, t := range topics {
			if k == lastMoved {
				return
			}
			if h.balanceTopic(t, &s) > 0 || lastMoved == -1 {
				lastMoved = k
			}
		}
	}
}

// balanceScratch is reused across balanceTopic calls.
type balanceScratch struct {
	parts      []int32
	keys       []uint64
	start, end []int32 // per member: its run in parts
}

// balanceTopic moves partitions of topic t from its most loaded subscribers
// (counting all their partitions) to its least loaded ones until they
// differ by at most one or the most loaded hold none of t. Each member gives
// its highest partitions first. It returns the number moved.
func (h *hetero) balanceTopic(t int32, s *balanceScratch) int {
	tp := h.topics[t]
	subs := h.subscribersOf(t)
	// Most topics are balanced already: check before sorting.
	if h.bal.spread(subs) <= 1 {
		return 0
	}
	h.bal.initialize(subs)
	owners := h.owner[tp.first : tp.first+tp.parts]
	// The partitions grouped by owner, ascending within each: sorted packed
	// (owner, partition) keys (every partition has an owner by now).
	s.keys = s.keys[:0]
	for q, m := range owners {
		s.keys = append(s.keys, uint64(m)<<32|uint64(q))
	}
	slices.Sort(s.keys)
	s.parts = s.parts[:0]
	for _, k := range s.keys {
		s.parts = append(s.parts, int32(uint32(k)))
	}
	for _, m := range subs {
		s.start[m], s.end[m] = -1, -1
	}
	for i, q := range s.parts {
		m := owners[q]
		if s.start[m] < 0 {
			s.start[m] = int32(i)
		}
		s.end[m] = int32(i + 1)
	}
	moved := 0
	for !h.bal.balanced() {
		m := h.bal.nextMostLoaded()
		for m >= 0 && s.end[m]-s.start[m] <= 0 {
			h.bal.excludeMostLoaded()
			m = h.bal.nextMostLoaded()
		}
		if m < 0 {
			break
		}
		s.end[m]--
		q := s.parts[s.end[m]]
		least := h.bal.nextLeastLoaded()
		if h.bal.balanced() {
			break
		}
		h.move(tp.first+q, least)
		moved++
	}
	return moved
}
