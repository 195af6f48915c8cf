package commitlog

import (
	"bytes"
	"errors"
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
// lookups of recent data need no I/O. Appends only add to buf: the entries
// past written reach the file in one write when the index is synced,
// trimmed, released or closed (segment flush, roll, close), instead of one
// pwrite per indexed batch. Entries lost in a kill -9 are all above the
// recovery point (a flush writes them before advancing it), and recovery
// rebuilds the index of every segment from the one holding that point.
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
	written  int    // bytes of buf known to be in the file, when resident
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
	x.written = len(x.buf)
	x.resident = true
	return nil
}

// writePendingLocked writes the entries appended since the last write to
// the file, in one positional write.
func (x *indexFile) writePendingLocked() error {
	if !x.resident || x.written >= len(x.buf) {
		return nil
	}
	if _, err := x.file.WriteAt(x.buf[x.written:], int64(x.written)); err != nil {
		return fmt.Errorf("write index %s: %w", x.path, err)
	}
	x.written = len(x.buf)
	return nil
}

// release drops the in-memory entries of an index that no longer grows.
// Lookups then read the file, so entries not yet written keep the index
// resident (trim, called first on a roll, has written them).
func (x *indexFile) release() {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.resident && x.written >= len(x.buf) {
		x.count = len(x.buf) / x.entrySize
		x.buf, x.written, x.resident = nil, 0, false
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

// copyLast copies the last entry into dst (entrySize bytes) and reports
// whether there is one; the append path uses it so checking the order of a
// new entry allocates nothing.
func (x *indexFile) copyLast(dst []byte) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := x.entriesLocked()
	if n == 0 {
		return false
	}
	if x.resident {
		copy(dst, x.buf[(n-1)*x.entrySize:])
		return true
	}
	copy(dst, x.entryLocked(n-1))
	return true
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
	x.written = min(x.written, int(keep))
	return nil
}

// trim writes pending entries and shrinks the file to exactly the entries
// it holds (Kafka's trimToValidSize).
func (x *indexFile) trim() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.writePendingLocked(); err != nil {
		return err
	}
	n := int64(x.entriesLocked() * x.entrySize)
	if err := x.file.Truncate(n); err != nil {
		return fmt.Errorf("trim index %s: %w", x.path, err)
	}
	return nil
}

// sync writes pending entries and makes the file durable.
func (x *indexFile) sync() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.writePendingLocked(); err != nil {
		return err
	}
	if err := x.file.Sync(); err != nil {
		return fmt.Errorf("sync index %s: %w", x.path, err)
	}
	return nil
}

// close writes pending entries (without a sync: a close without a flush
// promises no durability) and closes the file.
func (x *indexFile) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	writeErr := x.writePendingLocked()
	if err := x.file.Close(); err != nil {
		return errors.Join(writeErr, fmt.Errorf("close index %s: %w", x.path, err))
	}
	return writeErr
}
