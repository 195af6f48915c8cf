package cleaner

import (
	"hash/maphash"
	"math/bits"
)

// offsetMap maps a key's 128-bit hash to the last offset the key was seen
// at, in a bounded amount of memory (Kafka's SkimpyOffsetMap): keys are
// never stored, only two independently seeded 64-bit hashes, so a collision
// (odds about n²/2¹²⁹) is the price of a bounded map, as with Kafka's MD5.
//
// Slots are open-addressed with double hashing over a power-of-two table.
// The table starts small and doubles as keys arrive, up to the slots that
// log.cleaner.dedupe.buffer.size pays for (while doubling, the old table
// lives next to the new one: half as much again, briefly); so a clean of a
// few keys neither touches nor clears the whole buffer. At loadFactor of
// the largest table the map is full, and the cleaner then cleans only up to
// the offsets it covers.
type offsetMap struct {
	seed1, seed2 maphash.Seed
	slots        []offsetSlot
	mask         uint64
	used         int
	limit        int // keys the current table takes before it doubles
	maxSlots     int
	loadFactor   float64
}

type offsetSlot struct {
	h1, h2 uint64
	offset int64 // offset+1; 0 marks an empty slot
}

// offsetSlotSize is the memory one slot takes (two hashes and an offset).
const offsetSlotSize = 24

// initialOffsetSlots is the size of a fresh table.
const initialOffsetSlots = 1 << 12

// newOffsetMap makes a map of at most memory bytes of slots.
func newOffsetMap(memory int64, loadFactor float64) *offsetMap {
	n := max(memory/offsetSlotSize, 2)
	m := &offsetMap{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(),
		maxSlots: 1 << (63 - bits.LeadingZeros64(uint64(n))), loadFactor: loadFactor}
	m.clear()
	return m
}

// capacity is how many keys the map takes at most.
func (m *offsetMap) capacity() int { return m.limitOf(m.maxSlots) }

func (m *offsetMap) limitOf(size int) int {
	return min(max(int(float64(size)*m.loadFactor), 1), size-1)
}

// clear empties the map and shrinks it back to a small table.
func (m *offsetMap) clear() {
	m.resize(min(initialOffsetSlots, m.maxSlots))
	m.used = 0
}

func (m *offsetMap) resize(size int) {
	m.slots = make([]offsetSlot, size)
	m.mask = uint64(size - 1)
	m.limit = m.limitOf(size)
}

// full reports whether the map holds as many keys as it may.
func (m *offsetMap) full() bool { return m.used >= m.capacity() }

// put records offset as key's latest; it returns false when a new key does
// not fit (the map is full).
func (m *offsetMap) put(key []byte, offset int64) bool {
	h1, h2 := maphash.Bytes(m.seed1, key), maphash.Bytes(m.seed2, key)
	i, found := m.find(h1, h2)
	if !found {
		if m.used >= m.limit {
			if len(m.slots) >= m.maxSlots {
				return false
			}
			m.grow()
			i, _ = m.find(h1, h2)
		}
		m.used++
		m.slots[i].h1, m.slots[i].h2 = h1, h2
	}
	m.slots[i].offset = offset + 1
	return true
}

// grow doubles the table, re-placing every key.
func (m *offsetMap) grow() {
	old := m.slots
	m.resize(2 * len(old))
	for _, s := range old {
		if s.offset != 0 {
			i, _ := m.find(s.h1, s.h2)
			m.slots[i] = s
		}
	}
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
	for {
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
