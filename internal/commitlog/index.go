package commitlog

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-io/sluice/internal/vfs"
)

// Entry sizes of Kafka's index files.
const (
	offsetIndexEntrySize = 8  // relative offset int32, position int32
	timeIndexEntrySize   = 12 // timestamp int64, relative offset int32
)

// offsetIndex is a segment's .index file: sparse (relative offset, position)
// pairs, one per index.interval.bytes of log, each naming the last offset of
// a batch and the position where that batch starts.
type offsetIndex struct {
	*indexFile
	baseOffset int64
}

// indexEntry is one decoded entry of either index kind.
type indexEntry struct {
	Offset    int64 // absolute offset
	Position  int64 // offset index only
	Timestamp int64 // time index only
}

func openOffsetIndex(fsys vfs.FS, path string, baseOffset int64, maxBytes int) (*offsetIndex, error) {
	f, err := openIndexFile(fsys, path, offsetIndexEntrySize, maxBytes, validOffsetIndexPrefix)
	if err != nil {
		return nil, err
	}
	return &offsetIndex{indexFile: f, baseOffset: baseOffset}, nil
}

// validOffsetIndexPrefix returns the longest prefix of raw whose entries
// strictly increase in both offset and position. An all-zero entry ends the
// index: it is the unused preallocated tail (Kafka never writes (0, 0), as
// the first entry comes only after index.interval.bytes of log).
func validOffsetIndexPrefix(raw []byte) []byte {
	n := len(raw) / offsetIndexEntrySize
	prevRel, prevPos := int64(-1), int64(-1)
	for i := 0; i < n; i++ {
		e := raw[i*offsetIndexEntrySize : (i+1)*offsetIndexEntrySize]
		rel, pos := int64(binary.BigEndian.Uint32(e)), int64(binary.BigEndian.Uint32(e[4:]))
		if isZero(e) || rel <= prevRel || pos <= prevPos || rel > math.MaxInt32 || pos > math.MaxInt32 {
			return raw[:i*offsetIndexEntrySize]
		}
		prevRel, prevPos = rel, pos
	}
	return raw[:n*offsetIndexEntrySize]
}

func (x *offsetIndex) decode(e []byte) indexEntry {
	return indexEntry{
		Offset:   x.baseOffset + int64(binary.BigEndian.Uint32(e)),
		Position: int64(binary.BigEndian.Uint32(e[4:])),
	}
}

// lastEntry returns the last entry, or (baseOffset, 0) when the index is empty.
func (x *offsetIndex) lastEntry() indexEntry {
	n := x.entries()
	if n == 0 {
		return indexEntry{Offset: x.baseOffset}
	}
	return x.decode(x.entry(n - 1))
}

// lookup returns the position to start scanning from for target: the entry
// with the largest offset <= target, or position 0.
func (x *offsetIndex) lookup(target int64) indexEntry {
	rel := target - x.baseOffset
	i, e := x.search(func(e []byte) bool { return int64(binary.BigEndian.Uint32(e)) <= rel })
	if i < 0 {
		return indexEntry{Offset: x.baseOffset}
	}
	return x.decode(e)
}

// append adds an entry for a batch whose last offset is offset and that
// starts at pos. Entries must increase; a non-increasing one is ignored, as
// Kafka does after truncation re-appends.
func (x *offsetIndex) append(offset, pos int64) error {
	var raw [offsetIndexEntrySize]byte
	if x.copyLast(raw[:]) {
		last := x.decode(raw[:])
		if offset <= last.Offset || pos <= last.Position {
			return nil
		}
	}
	rel := offset - x.baseOffset
	if rel < 0 || rel > math.MaxInt32 || pos > math.MaxInt32 {
		return fmt.Errorf("index %s: entry offset %d position %d out of range", x.path, offset, pos)
	}
	var e [offsetIndexEntrySize]byte
	binary.BigEndian.PutUint32(e[:], uint32(rel))
	binary.BigEndian.PutUint32(e[4:], uint32(pos))
	return x.appendEntry(e[:])
}

// truncateTo drops entries for offsets >= offset.
func (x *offsetIndex) truncateTo(offset int64) error {
	rel := offset - x.baseOffset
	i, _ := x.search(func(e []byte) bool { return int64(binary.BigEndian.Uint32(e)) < rel })
	return x.truncateEntries(i + 1)
}

// timeIndex is a segment's .timeindex file: (timestamp, relative offset)
// pairs with increasing timestamps, so a timestamp lookup finds where to
// start scanning.
type timeIndex struct {
	*indexFile
	baseOffset int64
}

func openTimeIndex(fsys vfs.FS, path string, baseOffset int64, maxBytes int) (*timeIndex, error) {
	f, err := openIndexFile(fsys, path, timeIndexEntrySize, maxBytes, validTimeIndexPrefix)
	if err != nil {
		return nil, err
	}
	return &timeIndex{indexFile: f, baseOffset: baseOffset}, nil
}

// validTimeIndexPrefix returns the longest prefix whose timestamps strictly
// increase and whose offsets do not decrease; an all-zero entry ends it.
func validTimeIndexPrefix(raw []byte) []byte {
	n := len(raw) / timeIndexEntrySize
	prevTS, prevRel := int64(math.MinInt64), int64(-1)
	for i := 0; i < n; i++ {
		e := raw[i*timeIndexEntrySize : (i+1)*timeIndexEntrySize]
		ts, rel := int64(binary.BigEndian.Uint64(e)), int64(binary.BigEndian.Uint32(e[8:]))
		if isZero(e) || ts <= prevTS || rel < prevRel || rel > math.MaxInt32 {
			return raw[:i*timeIndexEntrySize]
		}
		prevTS, prevRel = ts, rel
	}
	return raw[:n*timeIndexEntrySize]
}

func (x *timeIndex) decode(e []byte) indexEntry {
	return indexEntry{
		Timestamp: int64(binary.BigEndian.Uint64(e)),
		Offset:    x.baseOffset + int64(binary.BigEndian.Uint32(e[8:])),
	}
}

// lastEntry returns the last entry, or (NoTimestamp, baseOffset) when empty.
func (x *timeIndex) lastEntry() indexEntry {
	n := x.entries()
	if n == 0 {
		return indexEntry{Timestamp: -1, Offset: x.baseOffset}
	}
	return x.decode(x.entry(n - 1))
}

// lookup returns the entry with the largest timestamp <= ts, or
// (NoTimestamp, baseOffset) when every entry is later.
func (x *timeIndex) lookup(ts int64) indexEntry {
	i, e := x.search(func(e []byte) bool { return int64(binary.BigEndian.Uint64(e)) <= ts })
	if i < 0 {
		return indexEntry{Timestamp: -1, Offset: x.baseOffset}
	}
	return x.decode(e)
}

// maybeAppend adds (ts, offset) when ts is later than the last entry's, as
// Kafka's TimeIndex.maybeAppend. skipFull lets the final entry written when
// a segment becomes inactive use the slot reserved for it.
func (x *timeIndex) maybeAppend(ts, offset int64, skipFull bool) error {
	var raw [timeIndexEntrySize]byte
	if x.copyLast(raw[:]) {
		last := x.decode(raw[:])
		if ts <= last.Timestamp || offset < last.Offset {
			return nil
		}
	}
	if !skipFull && x.entries() >= x.maxEntries-1 {
		return nil
	}
	rel := offset - x.baseOffset
	if rel < 0 || rel > math.MaxInt32 {
		return fmt.Errorf("time index %s: offset %d out of range", x.path, offset)
	}
	var e [timeIndexEntrySize]byte
	binary.BigEndian.PutUint64(e[:], uint64(ts))
	binary.BigEndian.PutUint32(e[8:], uint32(rel))
	return x.appendEntry(e[:])
}

// truncateTo drops entries for offsets >= offset.
func (x *timeIndex) truncateTo(offset int64) error {
	rel := offset - x.baseOffset
	i, _ := x.search(func(e []byte) bool { return int64(binary.BigEndian.Uint32(e[8:])) < rel })
	return x.truncateEntries(i + 1)
}
