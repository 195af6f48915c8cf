package commitlog

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/vfs"
)

// finishInterruptedSwaps completes swaps a stop interrupted (see swap.go),
// before the segments are listed: a "<base>.log.swap" is a committed clean,
// so every live segment inside its offset range is removed and its .swap
// files take their live names. Other .swap files (index files renamed
// before their .log) belong to a swap that never committed and go.
//
// Like Kafka, the range is [base, the swap's next offset): a replaced
// segment whose records the clean removed entirely lies above it and
// survives. That is harmless: its records are older versions that later
// records, kept by the same clean, supersede.
func (l *Log) finishInterruptedSwaps() error {
	names, err := l.fsys.List(l.Dir())
	if err != nil {
		return fmt.Errorf("list %s: %w", l.Dir(), err)
	}
	committed := map[int64]bool{}
	var bases []int64
	for _, name := range names {
		if base, ok := strings.CutSuffix(name, logSuffix+swapSuffix); ok {
			if b, err := strconv.ParseInt(base, 10, 64); err == nil && b >= 0 {
				committed[b] = true
				bases = append(bases, b)
			}
		}
	}
	for _, name := range names {
		if !strings.HasSuffix(name, swapSuffix) {
			continue
		}
		digits, _, _ := strings.Cut(name, ".")
		if b, err := strconv.ParseInt(digits, 10, 64); err == nil && committed[b] {
			continue
		}
		if err := l.fsys.Remove(filepath.Join(l.Dir(), name)); err != nil && !vfs.IsNotExist(err) {
			return fmt.Errorf("remove uncommitted swap file %s: %w", name, err)
		}
	}
	if len(bases) == 0 {
		return nil
	}
	sort.Slice(bases, func(i, j int) bool { return bases[i] < bases[j] })
	for _, base := range bases {
		if err := l.finishSwap(names, base); err != nil {
			return err
		}
	}
	return l.fsys.SyncDir(l.Dir())
}

// finishSwap replaces the live segments covered by the swap at base.
func (l *Log) finishSwap(names []string, base int64) error {
	next, err := swapNextOffset(l.fsys, segmentPath(l.Dir(), base, logSuffix)+swapSuffix, base)
	if err != nil {
		return err
	}
	for _, name := range names {
		digits, ok := strings.CutSuffix(name, logSuffix)
		if !ok {
			continue
		}
		b, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || b < base || (b >= next && b != base) {
			continue
		}
		for _, suffix := range segmentSuffixes() {
			if err := l.fsys.Remove(segmentPath(l.Dir(), b, suffix)); err != nil && !vfs.IsNotExist(err) {
				return fmt.Errorf("remove segment replaced by swap: %w", err)
			}
		}
	}
	// An index .swap may be missing (renamed before the stop, then removed
	// above): that index is rebuilt when the segment is loaded.
	if err := l.renameSwapFilesPresent(base); err != nil {
		return err
	}
	l.logger.Warn("finished an interrupted segment swap", "partition", l.tp.String(), "base_offset", base, "next_offset", next)
	return nil
}

// renameSwapFilesPresent renames whichever .swap files of base exist.
func (l *Log) renameSwapFilesPresent(base int64) error {
	for _, suffix := range [...]string{indexSuffix, timeIndexSuffix, txnIndexSuffix, logSuffix} {
		live := segmentPath(l.Dir(), base, suffix)
		if err := l.fsys.Rename(live+swapSuffix, live); err != nil && !vfs.IsNotExist(err) {
			return fmt.Errorf("finish swap of %s: %w", live, err)
		}
	}
	return nil
}

// swapNextOffset scans the batch headers of a swap file (synced before it
// was renamed) for the offset after its last whole batch.
func swapNextOffset(fsys vfs.FS, path string, base int64) (int64, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return 0, fmt.Errorf("open swap file %s: %w", path, err)
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return 0, fmt.Errorf("size of swap file %s: %w", path, err)
	}
	next := base
	for pos := int64(0); ; {
		h, err := readHeader(f, pos, size)
		if err == io.EOF || err != nil && isFormatError(err) {
			return next, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read swap file %s: %w", path, err)
		}
		next = h.NextOffset()
		pos += h.Size()
	}
}
