package checker

import (
	"math/bits"
	"slices"
)

// denseSlack is how far past its dense range a partition's offsets may
// land and still be stored densely; offsets further out (or before the
// first one seen) go to the sparse map, so an arbitrary history cannot
// make the checker allocate a slice per huge offset.
const denseSlack = 1 << 16

// plog is what the history says one partition holds: the value at each
// offset (from acks and reads together) and which offsets some reader
// read a value at.
//
// Invariant: an offset's value is in dense (base <= off < base+len(dense))
// or in sparse, never in both: an offset stored sparsely before dense
// grew over it stays sparse, its dense slot empty, until set moves it.
// Value ids are >= 0 and noValue marks an empty dense slot.
type plog struct {
	topic     string
	partition int32

	base   int64
	dense  []int32 // value id at base+i, or noValue
	seen   []uint64
	sparse map[int64]int32
	// placed counts the offsets set; sparseAbove the sparse ones above
	// base (which dense may grow over; those below it it never will).
	placed      int64
	sparseAbove int
	// sparseSeen lists the sparse offsets some reader read; sorted by
	// finish.
	sparseSeen []int64
	// rank[w] counts the seen dense offsets in words before w (built by
	// finish).
	rank []int32

	// maxRead is the highest offset a consumer read, maxReadOp the op
	// that read it; finalMaxRead the highest a final reader read; -1 when
	// none.
	maxRead      int64
	maxReadOp    int32
	finalMaxRead int64
	// finalHW is the highest high watermark a final read of the
	// partition reached, finalOp its Final op; -1 when none.
	finalHW int64
	finalOp int32
}

const noValue = -1

func newPlog(topic string, partition int32) *plog {
	return &plog{topic: topic, partition: partition, base: -1, maxRead: -1, maxReadOp: -1, finalMaxRead: -1, finalHW: -1, finalOp: -1}
}

// slot returns the dense index of off, growing dense when off is near
// its end; ok is false when off belongs to sparse.
func (p *plog) slot(off int64) (int, bool) {
	if p.base < 0 && off >= 0 {
		p.base = off
	}
	if p.base < 0 || off < p.base {
		return 0, false
	}
	i := off - p.base
	if i < int64(len(p.dense)) {
		return int(i), true
	}
	// Dense grows only while the offsets it holds are not too sparse, so
	// memory stays linear in the history.
	if i >= int64(len(p.dense))+denseSlack || i >= 4*p.placed+denseSlack {
		return 0, false
	}
	n := int(i) + 1 - len(p.dense)
	p.dense = slices.Grow(p.dense, n)
	for range n {
		p.dense = append(p.dense, noValue)
	}
	if w := (len(p.dense) + 63) / 64; w > len(p.seen) {
		p.seen = append(p.seen, make([]uint64, w-len(p.seen))...)
	}
	return int(i), true
}

// set records that off holds v and returns the value it held before
// (noValue when none).
func (p *plog) set(off int64, v int32) int32 {
	if i, ok := p.slot(off); ok {
		old := p.dense[i]
		if old == noValue && p.sparseAbove > 0 {
			if sv, had := p.sparse[off]; had {
				old, p.dense[i] = sv, sv
				delete(p.sparse, off)
				p.sparseAbove--
			}
		}
		if old == noValue {
			p.dense[i] = v
			p.placed++
		}
		return old
	}
	if p.sparse == nil {
		p.sparse = map[int64]int32{}
	}
	old, had := p.sparse[off]
	if !had {
		p.sparse[off] = v
		p.placed++
		if p.base >= 0 && off > p.base {
			p.sparseAbove++
		}
		return noValue
	}
	return old
}

// markSeen records that a reader read a value at off (set first).
func (p *plog) markSeen(off int64) {
	if i, ok := p.slot(off); ok {
		p.seen[i/64] |= 1 << (i % 64)
		return
	}
	p.sparseSeen = append(p.sparseSeen, off)
}

// at returns the value at off, or noValue.
func (p *plog) at(off int64) int32 {
	if p.base >= 0 && off >= p.base && off-p.base < int64(len(p.dense)) && p.dense[off-p.base] != noValue {
		return p.dense[off-p.base]
	}
	if v, ok := p.sparse[off]; ok {
		return v
	}
	return noValue
}

// finish builds the rank index; seenIn works only after it.
func (p *plog) finish() {
	// Offsets read while sparse that dense grew over since move in.
	kept := p.sparseSeen[:0]
	for _, off := range p.sparseSeen {
		if d := off - p.base; p.base >= 0 && d >= 0 && d < int64(len(p.dense)) {
			p.seen[d/64] |= 1 << (d % 64)
			continue
		}
		kept = append(kept, off)
	}
	p.sparseSeen = kept
	slices.Sort(p.sparseSeen)
	p.sparseSeen = slices.Compact(p.sparseSeen)
	p.rank = make([]int32, len(p.seen)+1)
	for w, word := range p.seen {
		p.rank[w+1] = p.rank[w] + int32(bits.OnesCount64(word))
	}
}

// denseRank counts the seen dense offsets below dense index i.
func (p *plog) denseRank(i int64) int64 {
	if i <= 0 || len(p.rank) == 0 {
		return 0
	}
	if i >= int64(len(p.dense)) {
		return int64(p.rank[len(p.seen)])
	}
	w := i / 64
	return int64(p.rank[w]) + int64(bits.OnesCount64(p.seen[w]&(1<<(i%64)-1)))
}

// seenIn reports whether a reader read a value at some offset in
// [lo, hi).
func (p *plog) seenIn(lo, hi int64) bool {
	if lo >= hi {
		return false
	}
	if p.base >= 0 && p.denseRank(hi-p.base) > p.denseRank(lo-p.base) {
		return true
	}
	i, _ := slices.BinarySearch(p.sparseSeen, lo)
	return i < len(p.sparseSeen) && p.sparseSeen[i] < hi
}

// seenOffsets lists up to max offsets in [lo, hi) a reader read a value
// at, lowest first.
func (p *plog) seenOffsets(lo, hi int64, max int) []int64 {
	var out []int64
	if p.base >= 0 {
		d, end := lo-p.base, hi-p.base
		d = clampOff(d, 0, int64(len(p.dense)))
		end = clampOff(end, 0, int64(len(p.dense)))
		for d < end && len(out) < max {
			if d%64 == 0 && p.seen[d/64] == 0 {
				d += 64 // an empty word at once
				continue
			}
			if p.seen[d/64]&(1<<(d%64)) != 0 {
				out = append(out, p.base+d)
			}
			d++
		}
	}
	i, _ := slices.BinarySearch(p.sparseSeen, lo)
	for n := 0; i < len(p.sparseSeen) && p.sparseSeen[i] < hi && n < max; i, n = i+1, n+1 {
		out = append(out, p.sparseSeen[i])
	}
	slices.Sort(out)
	if len(out) > max {
		out = out[:max]
	}
	return out
}

func clampOff(v, lo, hi int64) int64 {
	return min(max(v, lo), hi)
}
