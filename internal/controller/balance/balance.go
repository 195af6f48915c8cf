// Package balance is the cluster balancer's planner, pure: given the
// brokers (rack, state) and the partitions (replicas, leader, size), it
// returns the reassignments that spread replicas and preferred leaders
// evenly over the brokers that may take replicas, by count and by bytes,
// rack-aware, moving as little as it takes to bring every broker within
// the tolerance of the mean. A balanced cluster gets an empty plan.
//
// The active controller runs it on a broker's arrival or departure (the
// automatic mode), and `sluice cluster rebalance` and `sluice broker
// decommission` run it on what Metadata and DescribeLogDirs report; both
// execute the plan as ordinary reassignments (KIP-455), after which
// preferred-leader elections move the leaders.
//
// The phases, each greedy and deterministic: (1) replicas on draining or
// departed brokers, and replicas that break the rack rule, move to the
// least loaded broker that keeps the rule; (2) replica counts: a replica
// moves from the fullest to the emptiest broker until all are within the
// bounds; (3) bytes: moves and swaps between the heaviest and the lightest
// broker that keep the counts within bounds; (4) preferred leaders: a
// partition's replica list is reordered (no data moves) until leader
// counts are within the bounds.
package balance

import (
	"cmp"
	"math"
	"slices"
)

// State is a broker's state as the planner sees it.
type State int8

const (
	// Alive brokers hold replicas and may receive more.
	Alive State = iota
	// Fenced brokers keep their replicas but receive none: a fenced broker
	// may come back, and moving its data at once would be premature.
	Fenced
	// Decommissioning brokers give every replica away and receive none.
	Decommissioning
)

// Broker is one broker.
type Broker struct {
	ID    int32
	Rack  string // "" when the broker has no rack
	State State
}

// Partition is one partition. Replicas on broker ids not in the broker
// list (departed brokers) are moved like a decommissioning broker's.
type Partition struct {
	Topic     string
	Partition int32
	// Replicas are the target replicas, the preferred leader first.
	Replicas []int32
	// Size is the partition's size in bytes (each replica holds it).
	Size int64
	// Pinned partitions (a reassignment in progress) count towards the
	// brokers' loads but are never moved or reordered.
	Pinned bool
}

// Options tune a plan.
type Options struct {
	// Tolerance is how far above or below the mean (a fraction of it) a
	// broker's replica count, leader count and bytes may be; the count
	// bounds never get tighter than the mean's floor and ceiling. Zero
	// means DefaultTolerance.
	Tolerance float64
	// IgnoreBytes balances by count only (sizes still reported).
	IgnoreBytes bool
	// DrainOnly moves only what must move (replicas of draining brokers
	// and rack violations) and evens preferred leaders, as a decommission
	// does: the remaining brokers' replicas stay where they are.
	DrainOnly bool
}

// DefaultTolerance is the tolerance of a zero Options.
const DefaultTolerance = 0.05

// Reassignment is one partition's new replica list.
type Reassignment struct {
	Topic     string
	Partition int32
	Old       []int32
	Replicas  []int32 // the preferred leader first
}

// Plan is the planner's answer.
type Plan struct {
	// Reassignments are sorted by topic and partition; empty when the
	// cluster is balanced.
	Reassignments []Reassignment
	// Moves counts replicas placed on a new broker; MovedBytes is the
	// data they copy. Reorders counts reassignments that only change the
	// preferred leader.
	Moves      int
	MovedBytes int64
	Reorders   int
	// Unplaced counts replicas that had to leave a broker but found no
	// broker to take them (too few brokers for the replication factor).
	Unplaced int
}

// Compute plans the reassignments that balance the cluster.
func Compute(brokers []Broker, parts []Partition, opts Options) Plan {
	if opts.Tolerance <= 0 {
		opts.Tolerance = DefaultTolerance
	}
	p := newPlanner(brokers, parts, opts)
	if len(p.targets) == 0 {
		return Plan{}
	}
	unplaced := p.evacuate()
	if !opts.DrainOnly {
		p.balanceCounts()
		if !opts.IgnoreBytes {
			p.balanceBytes()
		}
	}
	p.balanceLeaders()
	plan := p.result(parts)
	plan.Unplaced = unplaced
	return plan
}

// bounds returns the lower and upper bound of a count whose mean is mean:
// the tolerance around it, never tighter than its floor and ceiling.
func bounds(mean, tol float64) (int, int) {
	lo := min(math.Floor(mean), math.Ceil(mean*(1-tol)))
	hi := max(math.Ceil(mean), math.Floor(mean*(1+tol)))
	return int(lo), int(hi)
}

// result lists the partitions whose replica list changed.
func (p *planner) result(parts []Partition) Plan {
	var plan Plan
	for i := range p.parts {
		pt := &p.parts[i]
		if !pt.changed {
			continue
		}
		newIDs := make([]int32, len(pt.replicas))
		for j, b := range pt.replicas {
			newIDs[j] = p.brokers[b].id
		}
		if slices.Equal(newIDs, parts[i].Replicas) {
			continue
		}
		moved := 0
		for _, id := range newIDs {
			if !slices.Contains(parts[i].Replicas, id) {
				moved++
			}
		}
		if moved == 0 {
			plan.Reorders++
		}
		plan.Moves += moved
		plan.MovedBytes += int64(moved) * parts[i].Size
		plan.Reassignments = append(plan.Reassignments, Reassignment{
			Topic: parts[i].Topic, Partition: parts[i].Partition,
			Old: slices.Clone(parts[i].Replicas), Replicas: newIDs,
		})
	}
	slices.SortFunc(plan.Reassignments, func(a, b Reassignment) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return plan
}
