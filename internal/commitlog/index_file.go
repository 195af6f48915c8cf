package commitlog

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/sluice-io/sluice/internal/vfs"
)

// indexFile is the storage shared by the offset index and the time index: a
// file of fixed-size entries, trimmed to the entries it holds when its
// segment is rolled or closed.
//
// It holds no open file between operations, as Kafka's LazyIndex and
// AbstractIndex hold none (the index is mapped on first use and its file
// handle closed at once): each operation opens the file, uses it and closes
// it, so an idle partition keeps only its segments' .log files open and a
// node's file descriptors grow with partitions, not three times as fast.
//
// The active segment's entries are resident in memory (buf), so the hot
// lookups of recent data need no I/O. Appends only add to buf: the entries
// past written reach the file in one write when the index is synced,
// trimmed, released or closed (segment flush, roll, close), instead of one
// pwrite per indexed batch; a new segment's index files are created by that
// first write. Entries lost in a kill -9 are all above the recovery point
// (a flush writes them before advancing it), and recovery rebuilds the index
// of every segment from the one holding that point. Older segments'
// indexes are not loaded: lookups binary-search the file with positional
// reads, so thousands of segments cost no memory (the role Kafka's lazy
// memory-mapped indexes play). mu guards the fields below it, because
// fetches look entries up while the appender adds them.
type indexFile struct {
	fsys       vfs.FS
	entrySize  int
	maxEntries int
	// validPrefix cuts raw file contents to the entries that are valid.
	validPrefix func(raw []byte) []byte

	mu       sync.RWMutex
	path     string // changes when the segment's files are renamed
	resident bool
	buf      []byte // entries*entrySize bytes, when resident
	written  int    // bytes of buf known to be in the file, when resident
	count    int    // entries in the file, when not resident
	fileSize int64  // size of the file when opened
	existed  bool   // the file was there when the index was opened
	onDisk   bool   // the file exists now
	unsynced bool   // written since the last sync
}

// openIndexFile describes the index at path from its size alone, opening
// nothing: until ensureResident its entries are taken to be the whole file,
// as Kafka does for a trimmed index.
func openIndexFile(fsys vfs.FS, path string, entrySize, maxBytes int, validPrefix func([]byte) []byte) (*indexFile, error) {
	var size int64
	info, err := fsys.Stat(path)
	switch {
	case err == nil:
		size = info.Size()
	case !vfs.IsNotExist(err):
		return nil, fmt.Errorf("stat index %s: %w", path, err)
	}
	maxEntries := maxBytes / entrySize
	if maxEntries < 1 {
		maxEntries = 1
	}
	return &indexFile{fsys: fsys, path: path, entrySize: entrySize, maxEntries: maxEntries,
		validPrefix: validPrefix, count: int(size) / entrySize, fileSize: size, existed: err == nil, onDisk: err == nil}, nil
}

// isZero reports whether an entry is all zero bytes: what an unused slot of a
// preallocated file holds.
func isZero(e []byte) bool { return bytes.Count(e, []byte{0}) == len(e) }

// setPath records that the segment renamed the file.
func (x *indexFile) setPath(path string) {
	x.mu.Lock()
	x.path = path
	x.mu.Unlock()
}

// openForWriteLocked opens (creating) the file for a write the caller
// finishes with Close.
func (x *indexFile) openForWriteLocked() (vfs.File, error) {
	f, err := x.fsys.OpenReadWrite(x.path)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", x.path, err)
	}
	x.onDisk = true
	return f, nil
}

// withFileLocked runs fn on the file opened for writing and closes it.
func (x *indexFile) withFileLocked(fn func(f vfs.File) error) error {
	f, err := x.openForWriteLocked()
	if err != nil {
		return err
	}
	err = fn(f)
	if cerr := f.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close index %s: %w", x.path, cerr)
	}
	return err
}

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
	raw, err := x.readAllLocked()
	if err != nil {
		return err
	}
	x.buf = append([]byte(nil), x.validPrefix(raw)...)
	x.written = len(x.buf)
	x.resident = true
	return nil
}

// readAllLocked returns the file's bytes; a missing file is empty.
func (x *indexFile) readAllLocked() ([]byte, error) {
	f, err := x.fsys.Open(x.path)
	if vfs.IsNotExist(err) {
		x.onDisk = false
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", x.path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("size of index %s: %w", x.path, err)
	}
	raw := make([]byte, size)
	n, err := f.ReadAt(raw, 0)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read index %s: %w", x.path, err)
	}
	return raw[:n], nil
}

// writePendingLocked writes the entries appended since the last write to
// the file, in one positional write.
func (x *indexFile) writePendingLocked() error {
	if !x.resident || x.written >= len(x.buf) {
		return nil
	}
	return x.withFileLocked(func(f vfs.File) error {
		if _, err := f.WriteAt(x.buf[x.written:], int64(x.written)); err != nil {
			return fmt.Errorf("write index %s: %w", x.path, err)
		}
		x.written = len(x.buf)
		x.unsynced = true
		return nil
	})
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

// reader reads entries of an index for one operation: from memory when
// resident, else from the file opened on the first read and closed by done.
type reader struct {
	x    *indexFile
	f    vfs.File
	fail bool
}

func (r *reader) entry(i int) ([]byte, bool) {
	x := r.x
	e := make([]byte, x.entrySize)
	if x.resident {
		copy(e, x.buf[i*x.entrySize:])
		return e, true
	}
	if r.f == nil && !r.fail {
		f, err := x.fsys.Open(x.path)
		if err != nil {
			r.fail = true
		}
		r.f = f
	}
	if r.fail {
		return e, false
	}
	_, err := r.f.ReadAt(e, int64(i*x.entrySize))
	return e, err == nil
}

func (r *reader) done() {
	if r.f != nil {
		r.f.Close()
	}
}

// entry returns a copy of entry i. A failed file read yields a zero entry,
// which sends lookups to the segment start: reading the log itself then
// reports the disk failure.
func (x *indexFile) entry(i int) []byte {
	x.mu.RLock()
	defer x.mu.RUnlock()
	r := reader{x: x}
	defer r.done()
	e, ok := r.entry(i)
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
	r := reader{x: x}
	defer r.done()
	e, ok := r.entry(n - 1)
	if !ok {
		clear(e)
	}
	copy(dst, e)
	return true
}

// search returns the last entry for which before(entry) is true and its
// index, or -1 and nil when there is none. Entries must be sorted so that
// before is true for a prefix.
func (x *indexFile) search(before func(e []byte) bool) (int, []byte) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	r := reader{x: x}
	defer r.done()
	lo, hi := 0, x.entriesLocked() // find the first i where !before
	var found []byte
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		e, ok := r.entry(mid)
		if !ok {
			// An unreadable entry cannot steer the search (a zero entry
			// would send it past the target, and a read would skip
			// data): start from the segment's beginning instead.
			return -1, nil
		}
		if before(e) {
			lo, found = mid+1, e
		} else {
			hi = mid
		}
	}
	// lo only moves past an entry before accepts, so found is entry lo-1.
	return lo - 1, found
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
	keep := int64(n * x.entrySize)
	if x.onDisk && x.written > int(keep) {
		err := x.withFileLocked(func(f vfs.File) error {
			size, err := f.Size()
			if err != nil {
				return fmt.Errorf("size of index %s: %w", x.path, err)
			}
			// Shrinking then growing back zero-fills the dropped entries.
			if err := f.Truncate(keep); err != nil {
				return fmt.Errorf("truncate index %s: %w", x.path, err)
			}
			if size > keep {
				if err := f.Truncate(size); err != nil {
					return fmt.Errorf("truncate index %s: %w", x.path, err)
				}
			}
			x.unsynced = true
			return nil
		})
		if err != nil {
			return err
		}
	}
	x.buf = x.buf[:keep]
	x.written = min(x.written, int(keep))
	return nil
}

// trim writes pending entries and makes the file exactly the entries it
// holds (Kafka's trimToValidSize), creating it if it was never written.
func (x *indexFile) trim() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.withFileLocked(func(f vfs.File) error {
		if x.resident && x.written < len(x.buf) {
			if _, err := f.WriteAt(x.buf[x.written:], int64(x.written)); err != nil {
				return fmt.Errorf("write index %s: %w", x.path, err)
			}
			x.written = len(x.buf)
		}
		if err := f.Truncate(int64(x.entriesLocked() * x.entrySize)); err != nil {
			return fmt.Errorf("trim index %s: %w", x.path, err)
		}
		x.unsynced = true
		return nil
	})
}

// sync writes pending entries and makes the file durable, creating it if it
// was never written (a flushed segment has both index files, so a restart
// finds them and trusts the segment).
func (x *indexFile) sync() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.writePendingLocked(); err != nil {
		return err
	}
	if x.onDisk && !x.unsynced {
		return nil
	}
	return x.withFileLocked(func(f vfs.File) error {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("sync index %s: %w", x.path, err)
		}
		x.unsynced = false
		return nil
	})
}

// close writes pending entries (without a sync: a close without a flush
// promises no durability). A file whose directory is gone (a deleted log)
// loses them: recovery rebuilds what an index lacks.
func (x *indexFile) close() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	err := x.writePendingLocked()
	if vfs.IsNotExist(err) {
		return nil
	}
	return err
}
