package share

import (
	"cmp"
	"slices"
)

// CombineStateBatches is Kafka 4.4's PersisterStateBatchCombiner: the
// batches of soFar and newer, less the offsets below startOffset (-1 keeps
// them all), with overlaps resolved by priority, not by age: where batches
// overlap the one with the higher delivery count wins, then the higher
// delivery state (archived over acknowledged over available). Adjacent
// ranges of equal state and count are coalesced. Zero or one batch left
// after pruning is returned as is.
func CombineStateBatches(soFar, newer []StateBatch, startOffset int64) []StateBatch {
	pruned := make([]StateBatch, 0, len(soFar)+len(newer))
	pruned = appendPruned(pruned, soFar, startOffset)
	pruned = appendPruned(pruned, newer, startOffset)
	if len(pruned) < 2 {
		return pruned
	}
	return sweepMerge(pruned)
}

func appendPruned(dst, batches []StateBatch, startOffset int64) []StateBatch {
	for _, b := range batches {
		switch {
		case startOffset != -1 && b.LastOffset < startOffset:
			continue // entirely below the start offset
		case startOffset != -1 && b.FirstOffset < startOffset:
			b.FirstOffset = startOffset
		}
		dst = append(dst, b)
	}
	return dst
}

// priority orders overlapping batches: higher delivery count, then higher
// delivery state.
type priority struct {
	count int16
	state int8
}

func (p priority) compare(o priority) int {
	if c := cmp.Compare(p.count, o.count); c != 0 {
		return c
	}
	return cmp.Compare(p.state, o.state)
}

// event is where a batch starts covering offsets, or stops (at
// LastOffset+1).
type event struct {
	offset int64
	begin  bool
	prio   priority
}

// sweepMerge walks the batches' boundaries in offset order, ends before
// begins at the same offset, keeping the priorities that cover the current
// offset; each stretch between boundaries takes the highest one.
func sweepMerge(batches []StateBatch) []StateBatch {
	events := make([]event, 0, 2*len(batches))
	for _, b := range batches {
		p := priority{count: b.DeliveryCount, state: b.DeliveryState}
		events = append(events, event{b.FirstOffset, true, p}, event{b.LastOffset + 1, false, p})
	}
	slices.SortStableFunc(events, func(a, b event) int {
		if c := cmp.Compare(a.offset, b.offset); c != 0 {
			return c
		}
		switch {
		case a.begin == b.begin:
			return 0
		case a.begin:
			return 1
		}
		return -1
	})
	active := map[priority]int{}
	var out []StateBatch
	var current *priority
	prev := int64(-1)
	for i := 0; i < len(events); {
		offset := events[i].offset
		if current != nil && offset > prev {
			out = appendCoalesced(out, prev, offset-1, *current)
		}
		for ; i < len(events) && events[i].offset == offset; i++ {
			e := events[i]
			if e.begin {
				active[e.prio]++
			} else if active[e.prio]--; active[e.prio] == 0 {
				delete(active, e.prio)
			}
		}
		current = highest(active)
		prev = offset
	}
	return out
}

func highest(active map[priority]int) *priority {
	var best *priority
	for p := range active {
		if best == nil || p.compare(*best) > 0 {
			best = &p
		}
	}
	return best
}

// appendCoalesced adds [first, last] at p, extending the last batch when it
// ends right before first with the same state and count.
func appendCoalesced(out []StateBatch, first, last int64, p priority) []StateBatch {
	if n := len(out); n > 0 {
		l := &out[n-1]
		if l.LastOffset+1 == first && l.DeliveryState == p.state && l.DeliveryCount == p.count {
			l.LastOffset = last
			return out
		}
	}
	return append(out, StateBatch{FirstOffset: first, LastOffset: last, DeliveryState: p.state, DeliveryCount: p.count})
}
