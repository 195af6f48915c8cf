package assignor

// The share group assignor (KIP-932): Kafka 4.4's SimpleAssignor, "simple".
// A share group's members consume partitions together, so every
// assignable partition goes to at least one subscribed member, and when
// members outnumber partitions the partitions are shared: each by at most
// ceil(members/partitions) of them, each member's count within one of the
// others'. It is sticky like Kafka's: a member keeps the partitions it had
// while they fit those bounds. Members with the same subscription are
// balanced across all their topics at once (Kafka's homogeneous builder);
// otherwise each topic is balanced among its own subscribers (its
// heterogeneous builder). Where Kafka's choices depend on hash-set order,
// this one takes members and partitions in sorted order: the same rules,
// not always Kafka's exact pick.

import (
	"maps"
	"slices"

	"github.com/sluice-io/sluice/internal/kafka"
)

// SimpleName is the share assignor's name, as ShareGroupDescribe shows it.
const SimpleName = "simple"

// ShareMember is one share group member as the assignor sees it.
type ShareMember struct {
	ID string
	// Subscribed is the ids of the topics the member subscribes to that
	// exist, sorted.
	Subscribed []kafka.UUID
	// Current is the member's target assignment before this computation;
	// may be nil.
	Current Assignment
}

// ShareSpec is one share assignment's input.
type ShareSpec struct {
	// Members, sorted by ID.
	Members []ShareMember
	// Assignable is, by topic id, the sorted partitions that may be
	// assigned: those whose share state is initialized.
	Assignable map[kafka.UUID][]int32
}

// topicPartition is one assignable partition.
type topicPartition struct {
	topic     kafka.UUID
	partition int32
}

func compareTP(a, b topicPartition) int {
	if c := compareUUIDs(a.topic, b.topic); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}

func compareUUIDs(a, b kafka.UUID) int {
	for i := range a {
		if a[i] != b[i] {
			return int(a[i]) - int(b[i])
		}
	}
	return 0
}

// AssignShare computes every member's target assignment (an entry for
// each member, possibly empty).
func AssignShare(spec ShareSpec) (map[string]Assignment, error) {
	members := slices.Clone(spec.Members)
	slices.SortFunc(members, func(a, b ShareMember) int { return compareStrings(a.ID, b.ID) })
	for i := 1; i < len(members); i++ {
		if members[i].ID == members[i-1].ID {
			return nil, &SpecError{Reason: "duplicate member id " + members[i].ID}
		}
	}
	out := make(map[string]Assignment, len(members))
	for _, m := range members {
		out[m.ID] = Assignment{}
	}
	if homogeneous(members) {
		if len(members) > 0 {
			shareBuild(members, partitionsOf(members[0].Subscribed, spec.Assignable), out)
		}
	} else {
		for _, topic := range subscribedTopics(members) {
			var subs []ShareMember
			for _, m := range members {
				if slices.Contains(m.Subscribed, topic) {
					subs = append(subs, m)
				}
			}
			shareBuild(subs, partitionsOf([]kafka.UUID{topic}, spec.Assignable), out)
		}
	}
	for id, a := range out {
		for t := range a {
			slices.Sort(a[t])
		}
		out[id] = a
	}
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func homogeneous(members []ShareMember) bool {
	for i := 1; i < len(members); i++ {
		if !slices.Equal(members[i].Subscribed, members[0].Subscribed) {
			return false
		}
	}
	return true
}

func subscribedTopics(members []ShareMember) []kafka.UUID {
	set := map[kafka.UUID]bool{}
	for _, m := range members {
		for _, t := range m.Subscribed {
			set[t] = true
		}
	}
	return slices.SortedFunc(maps.Keys(set), compareUUIDs)
}

func partitionsOf(topics []kafka.UUID, assignable map[kafka.UUID][]int32) []topicPartition {
	var out []topicPartition
	for _, t := range topics {
		for _, p := range assignable[t] {
			out = append(out, topicPartition{t, p})
		}
	}
	slices.SortFunc(out, compareTP)
	return slices.CompactFunc(out, func(a, b topicPartition) bool { return a == b })
}

// shareBuild assigns parts among members (all subscribed to them) and adds
// the result to out.
func shareBuild(members []ShareMember, parts []topicPartition, out map[string]Assignment) {
	if len(members) == 0 || len(parts) == 0 {
		return
	}
	m, p := len(members), len(parts)
	sharing := (m + p - 1) / p // at most this many members per partition
	total := p * sharing
	desired := make([]int, m) // each member's share of the total
	for i := range desired {
		desired[i] = total / m
		if i < total%m {
			desired[i]++
		}
	}
	target := make(map[topicPartition]bool, p)
	for _, tp := range parts {
		target[tp] = true
	}
	holders := make(map[topicPartition][]int, p)
	held := make([][]topicPartition, m)
	// Stickiness: keep what each member had that is still assignable, up
	// to its desired count and the partition's sharing bound.
	for i, mem := range members {
		for _, tp := range currentPartitions(mem.Current) {
			if !target[tp] || len(held[i]) >= desired[i] || len(holders[tp]) >= sharing {
				continue
			}
			held[i] = append(held[i], tp)
			holders[tp] = append(holders[tp], i)
		}
	}
	// Fill each partition up to the sharing bound with the members that
	// still have room, in turn; a partition no such member can take goes
	// to the least loaded member without it, so none is left unassigned.
	next := 0
	for _, tp := range parts {
		for len(holders[tp]) < sharing {
			i, ok := nextWithRoom(held, desired, holders[tp], &next)
			if !ok {
				if len(holders[tp]) > 0 {
					break
				}
				i = leastLoaded(held, holders[tp])
			}
			held[i] = append(held[i], tp)
			holders[tp] = append(holders[tp], i)
		}
	}
	for i, mem := range members {
		a := out[mem.ID]
		for _, tp := range held[i] {
			a[tp.topic] = append(a[tp.topic], tp.partition)
		}
	}
}

func currentPartitions(a Assignment) []topicPartition {
	var out []topicPartition
	for t, parts := range a {
		for _, p := range parts {
			out = append(out, topicPartition{t, p})
		}
	}
	slices.SortFunc(out, compareTP)
	return out
}

// nextWithRoom returns the next member, round-robin from *next, below its
// desired count and not among has.
func nextWithRoom(held [][]topicPartition, desired []int, has []int, next *int) (int, bool) {
	m := len(held)
	for k := range m {
		i := (*next + k) % m
		if len(held[i]) < desired[i] && !slices.Contains(has, i) {
			*next = (i + 1) % m
			return i, true
		}
	}
	return 0, false
}

func leastLoaded(held [][]topicPartition, has []int) int {
	best := -1
	for i := range held {
		if slices.Contains(has, i) {
			continue
		}
		if best < 0 || len(held[i]) < len(held[best]) {
			best = i
		}
	}
	return best
}
