package commitlog

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"sluice/internal/vfs"
)

// indexFile is the storage shared by the offset index and the time index: a
// file of fixed-size entries, preallocated to its maximum size while its
// segment is active (as Kafka preallocates its memory-mapped indexes) and
// trimmed to the entries it holds when the segment is rolled or closed.
//
// The active segment's entries are resident in memory (buf), so the hot
// lookups of recent data need no I/O and appends only write the new entry.
// Older segments' indexes are not loaded: lookups binary-search the file
// with positional reads, so thousands of segments cost no memory (the role
// Kafka's lazy memory-mapped indexes play). mu guards buf, count and
// resident, because fetches look entries up while the appender adds them.
type indexFile struct {
	fsys       vfs.FS
	path       string
	file       vfs.File
	entrySize  int
	maxEntries int
	// validPrefix cuts raw file contents to the entries that are valid.
	validPrefix func(raw []byte) []byte

	mu       sync.RWMutex
	resident bool
	buf      []byte // entries*entrySize bytes, when resident
	count    int    // entries in the file, when not resident
	fileSize int64  // size of the file when opened
	existed  bool   // the file was there before open created it
}

// openIndexFile opens or creates the index at path without reading it:
// until ensureResident, its entries are taken to be the whole file, as
// Kafka does for a trimmed index.
func openIndexFile(fsys vfs.FS, path string, entrySize, maxBytes int, validPrefix func([]byte) []byte) (*indexFile, error) {
	_, statErr := fsys.Stat(path)
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("size of index %s: %w", path, err)
	}
	maxEntries := maxBytes / entrySize
	if maxEntries < 1 {
		maxEntries = 1
	}
	return &indexFile{fsys: fsys, path: path, file: f, entrySize: entrySize, maxEntries: maxEntries,
		validPrefix: validPrefix, count: int(size) / entrySize, fileSize: size, existed: statErr == nil}, nil
}

// isZero reports whether an entry is all zero bytes: what an unused slot of a
// preallocated file holds.
func isZero(e []byte) bool { return bytes.Count(e, []byte{0}) == len(e) }

// ensureResident loads the file's valid entries into memory.
func (x *indexFile) ensureResident() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.ensureResidentLocked()
}

func (x *indexFile) ensureResidentLocked() error {
	if x.resident {
		return nil
	}
	size, err := x.file.Size()
	if err != nil {
		return fmt.Errorf("size of index %s: %w", x.path, err)
	}
	raw := make([]byte, size)
	if size > 0 {
		n, err := x.file.ReadAt(raw, 0)
		if err != nil && err != io.EOF {
			return fmt.Errorf("read index %s: %w", x.path, err)
		}
		raw = raw[:n]
	}
	x.buf = append([]byte(nil), x.validPrefix(raw)...)
	x.resident = true
	return nil
}

// release drops the in-memory entries of an index that no longer grows.
func (x *indexFile) release() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.resident {
		x.count = len(x.buf) / x.entrySize
		x.buf, x.resident = nil, false
	}
}

func (x *indexFile) entries() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entriesLocked()
}

func (x *indexFile) entriesLocked() int {
	if x.resident {
		return len(x.buf) / x.entrySize
	}
	return x.count
}

func (x *indexFile) isFull() bool { return x.entries() >= x.maxEntries }

// entry returns a copy of entry i.
func (x *indexFile) entry(i int) []byte {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.entryLocked(i)
}

// entryLocked reads entry i from memory or the file. A failed file read
// yields a zero entry, which sends lookups to the segment start: reading
// the log itself then reports the disk failure.
func (x *indexFile) entryLocked(i int) []byte {
	e, ok := x.readEntryLocked(i)
	if !ok {
		clear(e)
	}
	return e
}

// readEntryLocked reads entry i; ok is false when the file read failed.
func (x *indexFile) readEntryLocked(i int) ([]byte, bool) {
	e := make([]byte, x.entrySize)
	if x.resident {
		copy(e, x.buf[i*x.entrySize:])
		return e, true
	}
	_, err := x.file.ReadAt(e, int64(i*x.entrySize))
	return e, err == nil
}

// search returns the index of the last entry for which before(entry) is
// true, or -1 when there is none. Entries must be sorted so that before is
// true for a prefix.
func (x *indexFile) search(before func(e []byte) bool) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	lo, hi := 0, x.entriesLocked() // find the first i where !before
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		e, ok := x.readEntryLocked(mid)
		if !ok {
			// An unreadable entry cannot steer the search (a zero entry
			// would send it past the target, and a read would skip
			// data): start from the segment's beginning instead.
			return -1
		}
		if before(e) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// preallocate grows the file to its maximum size so appends never extend it.
// It never cuts entries (segment.index.bytes may have been lowered since
// they were written; the full index then makes the segment roll).
func (x *indexFile) preallocate() error {
	x.mu.RLock()
	n := max(x.maxEntries, x.entriesLocked())
	x.mu.RUnlock()
	if err := x.file.Truncate(int64(n * x.entrySize)); err != nil {
		return fmt.Errorf("preallocate index %s: %w", x.path, err)
	}
	return nil
}

func (x *indexFile) appendEntry(e []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.ensureResidentLocked(); err != nil {
		return err
	}
	n := len(x.buf) / x.entrySize
	if n >= x.maxEntries {
		return fmt.Errorf("index %s is full (%d entries)", x.path, n)
	}
	if _, err := x.file.WriteAt(e, int64(len(x.buf))); err != nil {
		return fmt.Errorf("write index %s: %w", x.path, err)
	}
	x.buf = append(x.buf, e...)
	return nil
}

// truncateEntries keeps the first n entries and zeroes the rest of the file,
// so a later load does not mistake stale entries for live ones.
func (x *indexFile) truncateEntries(n int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.ensureResidentLocked(); err != nil {
		return err
	}
	if n*x.entrySize >= len(x.buf) {
		return nil
	}
	size, err := x.file.Size()
	if err != nil {
		return fmt.Errorf("size of index %s: %w", x.path, err)
	}
	keep := int64(n * x.entrySize)
	// Shrinking then growing back zero-fills the dropped entries.
	if err := x.file.Truncate(keep); err != nil {
		return fmt.Errorf("truncate index %s: %w", x.path, err)
	}
	if size > keep {
		if err := x.file.Truncate(size); err != nil {
			return fmt.Errorf("truncate index %s: %w", x.path, err)
		}
	}
	x.buf = x.buf[:keep]
	return nil
}

// trim shrinks the file to exactly the entries it holds (Kafka's trimToValidSize).
func (x *indexFile) trim() error {
	x.mu.RLock()
	n := int64(x.entriesLocked() * x.entrySize)
	x.mu.RUnlock()
	if err := x.file.Truncate(n); err != nil {
		return fmt.Errorf("trim index %s: %w", x.path, err)
	}
	return nil
}

func (x *indexFile) sync() error {
	if err := x.file.Sync(); err != nil {
		return fmt.Errorf("sync index %s: %w", x.path, err)
	}
	return nil
}

func (x *indexFile) close() error {
	if err := x.file.Close(); err != nil {
		return fmt.Errorf("close index %s: %w", x.path, err)
	}
	return nil
}
