package cleaner

import (
	"hash/maphash"
	"math/bits"
)

// offsetMap maps a key's 128-bit hash to the last offset the key was seen
// at, in a fixed amount of memory (Kafka's SkimpyOffsetMap): keys are never
// stored, only two independently seeded 64-bit hashes, so a collision (odds
// about n²/2¹²⁹) is the price of a bounded map, as with Kafka's MD5.
//
// Slots are open-addressed with double hashing over a power-of-two table;
// the map counts as full at loadFactor, and the cleaner then cleans only up
// to the offsets it covers.
type offsetMap struct {
	seed1, seed2 maphash.Seed
	slots        []offsetSlot
	mask         uint64
	used         int
	limit        int
	// lookups and probes measure collisions (Kafka's hash collision rate).
	lookups, probes int64
}

type offsetSlot struct {
	h1, h2 uint64
	offset int64 // offset+1; 0 marks an empty slot
}

// offsetSlotSize is the memory one slot takes (two hashes and an offset).
const offsetSlotSize = 24

// newOffsetMap sizes a map to at most memory bytes.
func newOffsetMap(memory int64, loadFactor float64) *offsetMap {
	n := max(memory/offsetSlotSize, 2)
	size := uint64(1) << (63 - bits.LeadingZeros64(uint64(n)))
	limit := int(float64(size) * loadFactor)
	limit = min(max(limit, 1), int(size)-1)
	return &offsetMap{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(),
		slots: make([]offsetSlot, size), mask: size - 1, limit: limit}
}

func (m *offsetMap) clear() {
	clear(m.slots)
	m.used = 0
}

// full reports whether the map holds as many keys as it may.
func (m *offsetMap) full() bool { return m.used >= m.limit }

// put records offset as key's latest; it returns false when a new key does
// not fit (the map is full).
func (m *offsetMap) put(key []byte, offset int64) bool {
	h1, h2 := maphash.Bytes(m.seed1, key), maphash.Bytes(m.seed2, key)
	i, found := m.find(h1, h2)
	if !found {
		if m.full() {
			return false
		}
		m.used++
		m.slots[i].h1, m.slots[i].h2 = h1, h2
	}
	m.slots[i].offset = offset + 1
	return true
}

// get returns the latest offset recorded for key, or -1.
func (m *offsetMap) get(key []byte) int64 {
	h1, h2 := maphash.Bytes(m.seed1, key), maphash.Bytes(m.seed2, key)
	i, found := m.find(h1, h2)
	if !found {
		return -1
	}
	return m.slots[i].offset - 1
}

// find returns the slot holding the hash or, when absent, the empty slot
// where it belongs. The table always keeps an empty slot (limit < size).
func (m *offsetMap) find(h1, h2 uint64) (uint64, bool) {
	i := h1 & m.mask
	step := (h2 | 1) & m.mask // odd: the probe visits every slot
	if step == 0 {
		step = 1
	}
	m.lookups++
	for {
		m.probes++
		s := &m.slots[i]
		if s.offset == 0 {
			return i, false
		}
		if s.h1 == h1 && s.h2 == h2 {
			return i, true
		}
		i = (i + step) & m.mask
	}
}
