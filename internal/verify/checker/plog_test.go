package checker

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPlogAgainstMap: the dense and sparse stores together answer as a
// plain map would, whatever order offsets come in.
func TestPlogAgainstMap(t *testing.T) {
	for seed := range uint64(50) {
		rng := rand.New(rand.NewPCG(seed, 3))
		p := newPlog("t", 0)
		want := map[int64]int32{}
		seen := map[int64]bool{}
		for i := range 2000 {
			var off int64
			switch rng.IntN(4) {
			case 0:
				off = rng.Int64N(1 << 20) // far: sparse, until dense grows over it
			case 1:
				off = -1 - rng.Int64N(5)
			default:
				off = rng.Int64N(int64(len(p.dense)) + 100)
			}
			v := int32(i)
			old := p.set(off, v)
			if w, ok := want[off]; ok != (old != noValue) || (ok && w != old) {
				t.Fatalf("seed %d: set(%d) returned %d, want %d (%v)", seed, off, old, w, ok)
			}
			if _, ok := want[off]; !ok {
				want[off] = v
			}
			if rng.IntN(2) == 0 {
				p.markSeen(off)
				seen[off] = true
			}
		}
		p.finish()
		for off, v := range want {
			if got := p.at(off); got != v {
				t.Fatalf("seed %d: at(%d) = %d, want %d", seed, off, got, v)
			}
		}
		var sorted []int64
		for off := range seen {
			sorted = append(sorted, off)
		}
		slices.Sort(sorted)
		for range 200 {
			lo := rng.Int64N(1<<20) - 10
			if rng.IntN(2) == 0 {
				lo = rng.Int64N(int64(len(p.dense))+20) - 10 // within dense
			}
			hi := lo + rng.Int64N(1<<rng.IntN(13))
			var in []int64
			for _, off := range sorted {
				if off >= lo && off < hi {
					in = append(in, off)
				}
			}
			if got := p.seenIn(lo, hi); got != (len(in) > 0) {
				t.Fatalf("seed %d: seenIn(%d, %d) = %v, want %v", seed, lo, hi, got, in)
			}
			got := p.seenOffsets(lo, hi, 8)
			if len(in) > 8 {
				in = in[:8]
			}
			if !slices.Equal(got, in) {
				t.Fatalf("seed %d: seenOffsets(%d, %d) = %v, want %v", seed, lo, hi, got, in)
			}
		}
	}
}
