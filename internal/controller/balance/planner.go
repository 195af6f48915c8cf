package balance

import "slices"

// planner is one plan's working state. Brokers and partitions are referred
// to by index; every count is kept in step with the replica lists.
type planner struct {
	opts    Options
	brokers []broker
	parts   []part
	// targets are the indexes of the brokers that may receive replicas
	// (Alive), in broker id order.
	targets []int
	// numRacks is the number of racks among the targets (a broker without
	// a rack is a rack of its own).
	numRacks int
}

type broker struct {
	id    int32
	rack  int // rack index; unique for a broker without a rack
	state State
	// drain: every replica leaves (decommissioning or departed).
	drain bool
	// Invariant: replicas, leaders and bytes are the counts over the
	// partitions' current replica lists (leaders: first replica), and
	// hosted lists exactly the partitions holding this broker, unordered.
	replicas int
	leaders  int
	bytes    int64
	hosted   []int32
}

type part struct {
	replicas []int // broker indexes, the preferred leader first
	size     int64
	pinned   bool
	changed  bool
}

func newPlanner(brokers []Broker, parts []Partition, opts Options) *planner {
	p := &planner{opts: opts}
	idx := make(map[int32]int, len(brokers))
	racks := map[string]int{}
	nextRack := 0
	rackOf := func(name string) int {
		if name == "" {
			nextRack++
			return nextRack - 1
		}
		r, ok := racks[name]
		if !ok {
			r = nextRack
			racks[name] = r
			nextRack++
		}
		return r
	}
	sorted := slices.SortedFunc(slices.Values(brokers), func(a, b Broker) int { return int(a.ID) - int(b.ID) })
	for _, b := range sorted {
		if _, dup := idx[b.ID]; dup {
			continue
		}
		idx[b.ID] = len(p.brokers)
		p.brokers = append(p.brokers, broker{id: b.ID, rack: rackOf(b.Rack), state: b.State, drain: b.State == Decommissioning})
	}
	targetRacks := map[int]bool{}
	for i, b := range p.brokers {
		if b.state == Alive {
			p.targets = append(p.targets, i)
			targetRacks[b.rack] = true
		}
	}
	p.numRacks = len(targetRacks)
	p.parts = make([]part, len(parts))
	for i, in := range parts {
		pt := part{size: in.Size, pinned: in.Pinned, replicas: make([]int, 0, len(in.Replicas))}
		for _, id := range in.Replicas {
			b, ok := idx[id]
			if !ok {
				// A departed broker: a draining stand-in holds the replica.
				b = len(p.brokers)
				idx[id] = b
				p.brokers = append(p.brokers, broker{id: id, rack: rackOf(""), state: Decommissioning, drain: true})
			}
			pt.replicas = append(pt.replicas, b)
		}
		p.parts[i] = pt
		for j, b := range pt.replicas {
			p.add(i, b, j == 0)
		}
	}
	return p
}

// add counts partition pi on broker b.
func (p *planner) add(pi, b int, leader bool) {
	br := &p.brokers[b]
	br.replicas++
	br.bytes += p.parts[pi].size
	br.hosted = append(br.hosted, int32(pi))
	if leader {
		br.leaders++
	}
}

// move puts partition pi's replica at slot on broker to (from leaves).
// hostedAt is pi's position in from's hosted list, or -1 to look it up.
func (p *planner) move(pi, slot, to, hostedAt int) {
	pt := &p.parts[pi]
	from := pt.replicas[slot]
	fb := &p.brokers[from]
	if hostedAt < 0 {
		hostedAt = slices.Index(fb.hosted, int32(pi))
	}
	last := len(fb.hosted) - 1
	fb.hosted[hostedAt] = fb.hosted[last]
	fb.hosted = fb.hosted[:last]
	fb.replicas--
	fb.bytes -= pt.size
	if slot == 0 {
		fb.leaders--
	}
	pt.replicas[slot] = to
	pt.changed = true
	p.add(pi, to, slot == 0)
}

// maxPerRack is how many replicas of a partition of rf replicas one rack
// may hold: one when there are racks enough, else as evenly as can be.
func (p *planner) maxPerRack(rf int) int {
	if p.numRacks == 0 {
		return rf
	}
	return (rf + p.numRacks - 1) / p.numRacks
}

// rackCount counts partition pi's replicas in rack, leaving out slot skip.
func (p *planner) rackCount(pi, rack, skip int) int {
	n := 0
	for j, b := range p.parts[pi].replicas {
		if j != skip && p.brokers[b].rack == rack {
			n++
		}
	}
	return n
}

// canTake reports whether broker to may take partition pi's replica at
// slot: a target, not already a replica, and within the rack rule.
func (p *planner) canTake(pi, slot, to int) bool {
	if p.brokers[to].state != Alive {
		return false
	}
	pt := &p.parts[pi]
	if slices.Contains(pt.replicas, to) {
		return false
	}
	return p.rackCount(pi, p.brokers[to].rack, slot) < p.maxPerRack(len(pt.replicas))
}

// load orders brokers for placement: fewer replicas first, then fewer
// bytes, then the smaller id.
func (p *planner) lighter(a, b int) bool {
	x, y := &p.brokers[a], &p.brokers[b]
	if x.replicas != y.replicas {
		return x.replicas < y.replicas
	}
	if !p.opts.IgnoreBytes && x.bytes != y.bytes {
		return x.bytes < y.bytes
	}
	return x.id < y.id
}

// bestTarget returns the least loaded broker that can take pi's replica
// at slot, or -1.
func (p *planner) bestTarget(pi, slot int) int {
	best := -1
	for _, t := range p.targets {
		if p.canTake(pi, slot, t) && (best < 0 || p.lighter(t, best)) {
			best = t
		}
	}
	return best
}
