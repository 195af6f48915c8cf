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
// The entries are mirrored in memory (buf) so lookups need no I/O; the file
// receives each entry with a positional write. mu guards buf because fetches
// look entries up while the appender adds them.
type indexFile struct {
	fsys       vfs.FS
	path       string
	file       vfs.File
	entrySize  int
	maxEntries int

	mu  sync.RWMutex
	buf []byte // entries*entrySize bytes
}

// openIndexFile opens or creates the index at path and loads its raw
// contents. The caller validates them (see validPrefix) because what counts
// as a valid entry differs between the two index kinds.
func openIndexFile(fsys vfs.FS, path string, entrySize, maxBytes int) (*indexFile, []byte, error) {
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open index %s: %w", path, err)
	}
	size, err := f.Size()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("size of index %s: %w", path, err)
	}
	raw := make([]byte, size)
	if size > 0 {
		n, err := f.ReadAt(raw, 0)
		if err != nil && err != io.EOF {
			f.Close()
			return nil, nil, fmt.Errorf("read index %s: %w", path, err)
		}
		raw = raw[:n]
	}
	maxEntries := maxBytes / entrySize
	if maxEntries < 1 {
		maxEntries = 1
	}
	return &indexFile{fsys: fsys, path: path, file: f, entrySize: entrySize, maxEntries: maxEntries}, raw, nil
}

// isZero reports whether an entry is all zero bytes: what an unused slot of a
// preallocated file holds.
func isZero(e []byte) bool { return bytes.Count(e, []byte{0}) == len(e) }

// load installs entries already validated by the caller.
func (x *indexFile) load(valid []byte) {
	x.mu.Lock()
	x.buf = append([]byte(nil), valid...)
	x.mu.Unlock()
}

func (x *indexFile) entries() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.buf) / x.entrySize
}

func (x *indexFile) isFull() bool { return x.entries() >= x.maxEntries }

// entry returns a copy of entry i, so the caller keeps it safely while the
// appender goes on.
func (x *indexFile) entry(i int) []byte {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return append([]byte(nil), x.buf[i*x.entrySize:(i+1)*x.entrySize]...)
}

// search returns the index of the last entry for which before(entry) is
// true, or -1 when there is none. Entries must be sorted so that before is
// true for a prefix.
func (x *indexFile) search(before func(e []byte) bool) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	lo, hi := 0, len(x.buf)/x.entrySize // find first i where !before
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if before(x.buf[mid*x.entrySize : (mid+1)*x.entrySize]) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1
}

// preallocate grows the file to its maximum size so appends never extend it.
func (x *indexFile) preallocate() error {
	if err := x.file.Truncate(int64(x.maxEntries * x.entrySize)); err != nil {
		return fmt.Errorf("preallocate index %s: %w", x.path, err)
	}
	return nil
}

func (x *indexFile) appendEntry(e []byte) error {
	x.mu.Lock()
	defer x.mu.Unlock()
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
	n := int64(len(x.buf))
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
