package epoch

import (
	"fmt"
	"slices"
	"sync"

	"github.com/sluice-io/sluice/internal/vfs"
)

// Undefined is OffsetForLeaderEpoch's "no answer": UNDEFINED_EPOCH and
// UNDEFINED_EPOCH_OFFSET.
const (
	UndefinedEpoch       int32 = -1
	UndefinedEpochOffset int64 = -1
)

// Cache maps each leader epoch to its start offset, kept sorted with epochs
// and start offsets both strictly increasing, and persisted to its
// checkpoint file on every change. It is safe for concurrent use.
//
// Unlike Kafka, which flushes truncations asynchronously, every change is
// written (atomically, fsynced) before the method returns. A write error is
// returned after the in-memory change is made: as in Kafka, the caller must
// then treat the log directory as failed.
type Cache struct {
	fsys vfs.FS
	path string

	mu      sync.RWMutex
	entries []Entry // guarded by mu
}

// Open loads the cache from the checkpoint file at path. A missing file is
// an empty cache; malformed content is an error (wrapping
// checkpoint.ErrMalformed) the caller may answer by removing the file and
// rebuilding from the log. Entries are replayed through the same rules as
// Assign, so a file with non-monotonic entries loads as Kafka would load it.
func Open(fsys vfs.FS, path string) (*Cache, error) {
	c := &Cache{fsys: fsys, path: path}
	data, err := vfs.ReadFile(fsys, path)
	if vfs.IsNotExist(err) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open leader epoch cache: %w", err)
	}
	entries, err := Parse(path, data)
	if err != nil {
		return nil, fmt.Errorf("open leader epoch cache: %w", err)
	}
	for _, e := range entries {
		c.assignLocked(e)
	}
	return c, nil
}

// Assign records that epoch starts at startOffset. As in Kafka, an entry
// repeating the latest epoch at the same or a higher offset changes nothing;
// otherwise every entry whose epoch or start offset is not below the new
// one's is dropped (they conflict with it) and the new entry appended.
// Negative values are rejected.
func (c *Cache) Assign(epoch int32, startOffset int64) error {
	if epoch < 0 || startOffset < 0 {
		return fmt.Errorf("leader epoch cache %s: invalid entry epoch %d start offset %d", c.path, epoch, startOffset)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.assignLocked(Entry{Epoch: epoch, StartOffset: startOffset}) {
		return nil
	}
	return c.persistLocked()
}

// assignLocked applies Assign's rule in memory, reporting whether anything changed.
func (c *Cache) assignLocked(e Entry) bool {
	if n := len(c.entries); n > 0 {
		latest := c.entries[n-1]
		if e.Epoch == latest.Epoch && e.StartOffset >= latest.StartOffset {
			return false
		}
	}
	keep := len(c.entries)
	for keep > 0 && (c.entries[keep-1].Epoch >= e.Epoch || c.entries[keep-1].StartOffset >= e.StartOffset) {
		keep--
	}
	c.entries = append(c.entries[:keep], e)
	return true
}

// LatestEpoch returns the newest epoch, if any.
func (c *Cache) LatestEpoch() (int32, bool) {
	e, ok := c.LatestEntry()
	return e.Epoch, ok
}

// LatestEntry returns the newest entry, if any.
func (c *Cache) LatestEntry() (Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return Entry{}, false
	}
	return c.entries[len(c.entries)-1], true
}

// EarliestEntry returns the oldest entry, if any.
func (c *Cache) EarliestEntry() (Entry, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.entries) == 0 {
		return Entry{}, false
	}
	return c.entries[0], true
}

// Entries returns a copy of the entries, oldest first.
func (c *Cache) Entries() []Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.entries)
}

// EndOffsetFor answers OffsetForLeaderEpoch for requestedEpoch with Kafka's
// semantics: the largest known epoch <= requestedEpoch and its end offset,
// which is the start offset of the next larger epoch, or logEndOffset when
// requestedEpoch is the latest epoch. A requested epoch below every known
// epoch answers (requestedEpoch, start offset of the earliest entry), as
// Kafka does so a follower truncates to where the leader's log starts.
// UNDEFINED (-1, -1) answers an undefined requested epoch, an empty cache
// and an epoch above the latest.
func (c *Cache) EndOffsetFor(requestedEpoch int32, logEndOffset int64) (int32, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if requestedEpoch == UndefinedEpoch || len(c.entries) == 0 {
		return UndefinedEpoch, UndefinedEpochOffset
	}
	switch latest := c.entries[len(c.entries)-1].Epoch; {
	case requestedEpoch == latest:
		return requestedEpoch, logEndOffset
	case requestedEpoch > latest:
		return UndefinedEpoch, UndefinedEpochOffset
	}
	// higher is the first entry with an epoch above the requested one.
	higher, _ := slices.BinarySearchFunc(c.entries, requestedEpoch+1, func(e Entry, epoch int32) int {
		return compareInt32(e.Epoch, epoch)
	})
	if higher == 0 {
		return requestedEpoch, c.entries[0].StartOffset
	}
	return c.entries[higher-1].Epoch, c.entries[higher].StartOffset
}

func compareInt32(a, b int32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// EpochForOffset returns the epoch offset belongs to: that of the last entry
// starting at or before it. There is none below the earliest start offset.
func (c *Cache) EpochForOffset(offset int64) (int32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, found := slices.BinarySearchFunc(c.entries, offset, func(e Entry, off int64) int {
		switch {
		case e.StartOffset < off:
			return -1
		case e.StartOffset > off:
			return 1
		}
		return 0
	})
	if found {
		return c.entries[i].Epoch, true
	}
	if i == 0 {
		return 0, false
	}
	return c.entries[i-1].Epoch, true
}

// TruncateFromEnd removes every entry starting at or after endOffset, after
// the log is truncated to endOffset. A negative endOffset changes nothing.
func (c *Cache) TruncateFromEnd(endOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if endOffset < 0 {
		return nil
	}
	keep := len(c.entries)
	for keep > 0 && c.entries[keep-1].StartOffset >= endOffset {
		keep--
	}
	if keep == len(c.entries) {
		return nil
	}
	c.entries = c.entries[:keep]
	return c.persistLocked()
}

// TruncateFromStart drops the entries before startOffset, after the log
// start offset moved to startOffset: the last entry starting at or before it
// is kept, its start moved up to startOffset, and the ones before it go.
func (c *Cache) TruncateFromStart(startOffset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	drop := 0
	for drop < len(c.entries) && c.entries[drop].StartOffset <= startOffset {
		drop++
	}
	// Nothing before the start, or only the first entry starting exactly there (every
	// log whose start is its first epoch's offset, at every open): the entries would be
	// rewritten unchanged, and each rewrite costs a log's open two fsyncs.
	if drop == 0 || (drop == 1 && c.entries[0].StartOffset == startOffset) {
		return nil
	}
	first := Entry{Epoch: c.entries[drop-1].Epoch, StartOffset: startOffset}
	c.entries = append([]Entry{first}, c.entries[drop:]...)
	return c.persistLocked()
}

// Clear removes every entry and persists the empty cache.
func (c *Cache) Clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = nil
	return c.persistLocked()
}

// persistLocked writes the entries to the checkpoint file; the caller holds
// mu for writing, so concurrent changes reach the file in order.
func (c *Cache) persistLocked() error {
	if err := vfs.WriteFileAtomic(c.fsys, c.path, Format(c.entries)); err != nil {
		return fmt.Errorf("write leader epoch checkpoint %s: %w", c.path, err)
	}
	return nil
}
