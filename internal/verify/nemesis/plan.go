package nemesis

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// maxClockJump bounds a clock jump either way.
const maxClockJump = time.Minute

// fault is one planned fault: what it does and to whom.
type fault struct {
	kind Kind
	// nodes are the nodes it takes down, isolates or moves the clock of
	// (sorted); for a partial partition, every node with a cut link.
	nodes []int32
	// links are a partial partition's cut links, lower id first.
	links [][2]int32
	// offset is a clock jump's.
	offset time.Duration
	hold   time.Duration
	// seed drives the admin faults' choice of partition and replicas,
	// made when they run (it depends on the metadata then), so the
	// schedule draws the same numbers whatever the cluster answers.
	seed uint64
}

// plan draws the next fault: a kind of kinds, a minority of nodes, a hold
// around hold (half to one and a half times). Every call draws the same
// count of numbers, so a seed gives the same sequence of faults.
func plan(r *rand.Rand, kinds []Kind, nodes []int32, hold time.Duration) fault {
	f := fault{kind: kinds[r.IntN(len(kinds))], seed: r.Uint64()}
	f.hold = hold/2 + time.Duration(r.Int64N(int64(hold)+1))
	perm := make([]int32, len(nodes))
	for i, j := range r.Perm(len(nodes)) {
		perm[i] = nodes[j]
	}
	minority := max((len(nodes)-1)/2, 1)
	count := 1 + r.IntN(minority)
	jump := time.Second + time.Duration(r.Int64N(int64(maxClockJump-time.Second)))
	if r.IntN(2) == 0 {
		jump = -jump
	}
	switch f.kind {
	case Kill, Pause, Partition, Terminate:
		f.nodes = sorted(perm[:count])
	case ClockJump:
		f.nodes, f.offset = sorted(perm[:count]), jump
	case PartialPartition:
		f.links = ringCuts(perm)
		for _, l := range f.links {
			f.nodes = append(f.nodes, l[0], l[1])
		}
		f.nodes = sorted(f.nodes)
	}
	return f
}

// ringCuts are the links to cut so that each node of ring (in ring order)
// keeps its nearest neighbours, a majority counting itself, and no two
// nodes see the same majority; with three nodes, one link.
func ringCuts(ring []int32) [][2]int32 {
	n := len(ring)
	if n < 3 {
		return nil
	}
	if n == 3 {
		return [][2]int32{link(ring[0], ring[1])}
	}
	majority := n/2 + 1
	reach := majority / 2 // neighbours kept on each side
	var cuts [][2]int32
	for i := range n {
		for j := i + 1; j < n; j++ {
			if d := min(j-i, n-(j-i)); d > reach {
				cuts = append(cuts, link(ring[i], ring[j]))
			}
		}
	}
	slices.SortFunc(cuts, func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	return cuts
}

func link(a, b int32) [2]int32 {
	if a > b {
		a, b = b, a
	}
	return [2]int32{a, b}
}

func sorted(ids []int32) []int32 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// detail describes a process or network fault for the history.
func (f fault) detail() string {
	switch f.kind {
	case Kill:
		return "SIGKILL nodes " + ids(f.nodes) + ", restart after " + f.hold.String()
	case Pause:
		return "SIGSTOP nodes " + ids(f.nodes) + ", SIGCONT after " + f.hold.String()
	case Terminate:
		return "SIGTERM nodes " + ids(f.nodes) + ", restart after " + f.hold.String()
	case Partition:
		return "isolate nodes " + ids(f.nodes) + " for " + f.hold.String()
	case PartialPartition:
		parts := make([]string, len(f.links))
		for i, l := range f.links {
			parts[i] = fmt.Sprintf("%d<->%d", l[0], l[1])
		}
		return "cut " + strings.Join(parts, ", ") + " for " + f.hold.String()
	case ClockJump:
		return fmt.Sprintf("clock of nodes %s %+v for %s", ids(f.nodes), f.offset, f.hold)
	}
	return ""
}

func ids(nodes []int32) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = fmt.Sprint(n)
	}
	return strings.Join(parts, ",")
}
