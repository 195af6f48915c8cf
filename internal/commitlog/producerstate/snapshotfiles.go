package producerstate

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/vfs"
)

// SnapshotSuffix ends the name of a producer state snapshot.
const SnapshotSuffix = ".snapshot"

// tempSuffix is what vfs's renaming writes append to the file they rename into place.
const tempSuffix = vfs.TempSuffix

// SnapshotFileName is the name of the snapshot taken at offset: the state of
// every batch below offset, as Kafka names it ("%020d.snapshot").
func SnapshotFileName(offset int64) string { return fmt.Sprintf("%020d%s", offset, SnapshotSuffix) }

// parseSnapshotName returns the offset a snapshot file is named by.
func parseSnapshotName(name string) (int64, bool) {
	stem, ok := strings.CutSuffix(name, SnapshotSuffix)
	if !ok || len(stem) != 20 {
		return 0, false
	}
	off, err := strconv.ParseInt(stem, 10, 64)
	if err != nil || off < 0 {
		return 0, false
	}
	return off, true
}

func (m *Manager) snapshotPath(offset int64) string {
	return filepath.Join(m.dir, SnapshotFileName(offset))
}

// SnapshotOffsets lists the offsets of the snapshots in the directory, ascending.
func (m *Manager) SnapshotOffsets() ([]int64, error) {
	names, err := m.fs.List(m.dir)
	if err != nil {
		if vfs.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("list producer snapshots of %s: %w", m.name, err)
	}
	var offs []int64
	for _, n := range names { // List is sorted and the names are zero-padded
		if off, ok := parseSnapshotName(n); ok {
			offs = append(offs, off)
		}
	}
	return offs, nil
}

// removeTempSnapshots deletes the temporary files of snapshot writes a crash
// interrupted; they were never renamed into place, so nothing refers to them.
func (m *Manager) removeTempSnapshots() error {
	names, err := m.fs.List(m.dir)
	if err != nil {
		if vfs.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("list producer snapshots of %s: %w", m.name, err)
	}
	for _, n := range names {
		if stem, ok := strings.CutSuffix(n, tempSuffix); ok {
			if _, ok := parseSnapshotName(stem); ok {
				if err := m.fs.Remove(filepath.Join(m.dir, n)); err != nil && !vfs.IsNotExist(err) {
					return fmt.Errorf("delete temporary producer snapshot %s: %w", n, err)
				}
			}
		}
	}
	return nil
}

// TakeSnapshot writes the state to a snapshot named by the map end offset,
// unless the newest snapshot already covers it. The Log calls it when it
// rolls a segment (after UpdateMapEndOffset to the new segment's base
// offset) and on clean shutdown. The file is written atomically.
func (m *Manager) TakeSnapshot() error {
	if m.mapEndOffset <= m.lastSnapOffset {
		return nil
	}
	entries := make([]*Entry, 0, len(m.producers))
	for _, e := range m.producers {
		entries = append(entries, e)
	}
	path := m.snapshotPath(m.mapEndOffset)
	if err := vfs.WriteFileAtomic(m.fs, path, EncodeSnapshot(entries)); err != nil {
		return fmt.Errorf("write producer snapshot %s: %w", path, err)
	}
	m.log.Debug("wrote producer snapshot", "offset", m.mapEndOffset, "producers", len(entries))
	m.lastSnapOffset = m.mapEndOffset
	return nil
}

// TakeSnapshotUnsynced is TakeSnapshot without the fsyncs, for a roll
// under the log's lock (Kafka's takeSnapshot(sync = false)): the caller
// syncs the returned file and its directory later (SyncSnapshot), outside
// the lock. Until then a crash may leave the file torn or absent, which
// LoadLatest survives (a corrupt snapshot is deleted, an older one used).
// path is "" when no snapshot was written.
func (m *Manager) TakeSnapshotUnsynced() (path string, err error) {
	if m.mapEndOffset <= m.lastSnapOffset {
		return "", nil
	}
	entries := make([]*Entry, 0, len(m.producers))
	for _, e := range m.producers {
		entries = append(entries, e)
	}
	path = m.snapshotPath(m.mapEndOffset)
	if err := vfs.WriteFileRenamed(m.fs, path, EncodeSnapshot(entries)); err != nil {
		return "", fmt.Errorf("write producer snapshot %s: %w", path, err)
	}
	m.lastSnapOffset = m.mapEndOffset
	return path, nil
}

// SyncSnapshot syncs a snapshot file written by TakeSnapshotUnsynced; the
// caller syncs its directory after. A file deleted meanwhile (retention,
// truncation) is not an error.
func SyncSnapshot(fsys vfs.FS, path string) error {
	f, err := fsys.Open(path)
	if vfs.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sync producer snapshot %s: %w", path, err)
	}
	serr := f.Sync()
	if err := errors.Join(serr, f.Close()); err != nil {
		return fmt.Errorf("sync producer snapshot %s: %w", path, err)
	}
	return nil
}

// deleteSnapshot removes one snapshot file; a missing file is not an error.
func (m *Manager) deleteSnapshot(offset int64) error {
	if err := m.fs.Remove(m.snapshotPath(offset)); err != nil && !vfs.IsNotExist(err) {
		return fmt.Errorf("delete producer snapshot %d of %s: %w", offset, m.name, err)
	}
	return nil
}

// DeleteSnapshotsBelow removes the snapshots named by offsets below offset
// (exclusive), e.g. those of segments retention deleted.
func (m *Manager) DeleteSnapshotsBelow(offset int64) error {
	offs, err := m.SnapshotOffsets()
	if err != nil {
		return err
	}
	for _, off := range offs {
		if off < offset {
			if err := m.deleteSnapshot(off); err != nil {
				return err
			}
		}
	}
	return nil
}

// LoadLatest replaces the state with the newest readable snapshot; a corrupt
// one is deleted and the next older one tried. Producers that expired are
// skipped. With no usable snapshot the state is empty and starts at
// logStartOffset. It returns the map end offset, from which the caller
// replays the log.
func (m *Manager) LoadLatest(logStartOffset int64) (int64, error) {
	m.clear()
	if err := m.removeTempSnapshots(); err != nil {
		return 0, err
	}
	offs, err := m.SnapshotOffsets()
	if err != nil {
		return 0, err
	}
	nowMs := m.clk.Now().UnixMilli()
	for i := len(offs) - 1; i >= 0; i-- {
		off := offs[i]
		entries, err := m.readSnapshot(off)
		if errors.Is(err, ErrCorruptSnapshot) {
			m.log.Warn("deleting corrupt producer snapshot", "offset", off, "err", err)
			if err := m.deleteSnapshot(off); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		for _, e := range entries {
			if !isExpired(e, nowMs, m.exp) {
				m.loadEntry(e)
			}
		}
		m.log.Debug("loaded producer snapshot", "offset", off, "producers", len(m.producers))
		m.lastSnapOffset, m.mapEndOffset = off, off
		return off, nil
	}
	m.lastSnapOffset, m.mapEndOffset = logStartOffset, logStartOffset
	return logStartOffset, nil
}

func (m *Manager) readSnapshot(offset int64) ([]*Entry, error) {
	path := m.snapshotPath(offset)
	b, err := vfs.ReadFile(m.fs, path)
	if err != nil {
		return nil, fmt.Errorf("read producer snapshot %s: %w", path, err)
	}
	entries, err := DecodeSnapshot(b)
	if err != nil {
		return nil, fmt.Errorf("producer snapshot %s: %w", path, err)
	}
	return entries, nil
}

// TruncateAndReload fits the state to a log now spanning
// [logStartOffset, logEndOffset): snapshots above the end or at or below the
// start are deleted (Kafka's rule), and unless the state already ends at
// logEndOffset it is reloaded from the newest remaining snapshot. The caller
// then replays the log from MapEndOffset() to logEndOffset.
//
// Recovery after an unclean stop (and follower truncation) is therefore:
//
//	from, err := m.TruncateAndReload(logStart, recoveredEnd)
//	for each batch at or above from, below recoveredEnd, in offset order:
//	    data batch: m.Replay(h); control batch: m.ReplayMarker(h, marker)
//	m.UpdateMapEndOffset(recoveredEnd)
//	m.TakeSnapshot()
func (m *Manager) TruncateAndReload(logStartOffset, logEndOffset int64) (int64, error) {
	offs, err := m.SnapshotOffsets()
	if err != nil {
		return 0, err
	}
	for _, off := range offs {
		if off > logEndOffset || off <= logStartOffset {
			if err := m.deleteSnapshot(off); err != nil {
				return 0, err
			}
		}
	}
	if logEndOffset != m.mapEndOffset {
		return m.LoadLatest(logStartOffset)
	}
	if err := m.OnLogStartOffsetIncremented(logStartOffset); err != nil {
		return 0, err
	}
	return m.mapEndOffset, nil
}

// TruncateFullyAndStartAt empties the state and deletes every snapshot, for
// a log truncated to nothing that restarts at offset.
func (m *Manager) TruncateFullyAndStartAt(offset int64) error {
	m.clear()
	if err := m.removeTempSnapshots(); err != nil {
		return err
	}
	offs, err := m.SnapshotOffsets()
	if err != nil {
		return err
	}
	for _, off := range offs {
		if err := m.deleteSnapshot(off); err != nil {
			return err
		}
	}
	m.lastSnapOffset, m.mapEndOffset = 0, offset
	return nil
}

// DeletedSuffix marks a file scheduled for asynchronous deletion, as Kafka
// renames the files of deleted segments.
const DeletedSuffix = ".deleted"

// MarkSnapshotForDeletion renames the snapshot at offset to
// "<name>.snapshot.deleted" so it is deleted later with its segment. It
// returns the new path, or ok false when no such snapshot exists.
func (m *Manager) MarkSnapshotForDeletion(offset int64) (path string, ok bool, err error) {
	from := m.snapshotPath(offset)
	to := from + DeletedSuffix
	if err := m.fs.Rename(from, to); err != nil {
		if vfs.IsNotExist(err) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("mark producer snapshot %s for deletion: %w", from, err)
	}
	return to, true, nil
}

// RemoveStraySnapshots deletes snapshots that match no segment base offset,
// except the newest such snapshot when it lies above every segment: that is
// the one a clean shutdown writes at the log end. The Log calls it while
// loading, with the base offsets of the segments it found.
func (m *Manager) RemoveStraySnapshots(segmentBaseOffsets []int64) error {
	offs, err := m.SnapshotOffsets()
	if err != nil {
		return err
	}
	bases := make(map[int64]bool, len(segmentBaseOffsets))
	maxBase, haveBase := int64(0), false
	for _, b := range segmentBaseOffsets {
		bases[b] = true
		if !haveBase || b > maxBase {
			maxBase, haveBase = b, true
		}
	}
	latestStray, haveStray := int64(0), false
	for _, off := range offs { // ascending
		if bases[off] {
			continue
		}
		if haveStray {
			if err := m.deleteSnapshot(latestStray); err != nil {
				return err
			}
		}
		latestStray, haveStray = off, true
	}
	if haveStray && haveBase && latestStray < maxBase {
		return m.deleteSnapshot(latestStray)
	}
	return nil
}
