package quorum

// Reading checkpoints for observers: the active controller serves its newest
// snapshot to dedicated brokers with FetchSnapshot (KIP-630), by id (end
// offset and epoch, the file name), without decoding it.

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/sluice-io/sluice/internal/vfs"
)

// ErrSnapshotNotFound says no checkpoint with the asked id is on disk: it
// was never taken, or a newer one replaced it.
var ErrSnapshotNotFound = errors.New("quorum: snapshot not found")

// SnapshotID names a snapshot as Kafka does: EndOffset is the offset after
// the last entry it covers (the Raft index of that entry), Epoch that
// entry's leader epoch (Raft term).
type SnapshotID struct {
	EndOffset int64
	Epoch     int32
}

// LatestID returns the id of the newest checkpoint by its file name, and
// false when there is none.
func (s *FileSnapshotStore) LatestID() (SnapshotID, bool, error) {
	names, err := s.names()
	if err != nil || len(names) == 0 {
		return SnapshotID{}, false, err
	}
	id, err := parseCheckpointName(names[len(names)-1])
	if err != nil {
		return SnapshotID{}, false, err
	}
	return id, true, nil
}

// ReadCheckpoint returns the bytes of the checkpoint file with id, as
// EncodeCheckpoint laid them out, or ErrSnapshotNotFound.
func (s *FileSnapshotStore) ReadCheckpoint(id SnapshotID) ([]byte, error) {
	if id.EndOffset < 0 || id.Epoch < 0 {
		return nil, fmt.Errorf("%w: id %d-%d", ErrSnapshotNotFound, id.EndOffset, id.Epoch)
	}
	name := CheckpointName(uint64(id.EndOffset), uint64(id.Epoch))
	b, err := vfs.ReadFile(s.fs, filepath.Join(s.dir, name))
	if vfs.IsNotExist(err) {
		return nil, fmt.Errorf("%w: %s", ErrSnapshotNotFound, name)
	}
	if err != nil {
		return nil, fmt.Errorf("quorum: read snapshot %s: %w", name, err)
	}
	return b, nil
}

// parseCheckpointName reads the id from a name CheckpointName made.
func parseCheckpointName(name string) (SnapshotID, error) {
	base, ok := strings.CutSuffix(name, CheckpointSuffix)
	off, epoch, dash := strings.Cut(base, "-")
	if !ok || !dash {
		return SnapshotID{}, fmt.Errorf("%w: file name %s", ErrCorruptCheckpoint, name)
	}
	o, err1 := strconv.ParseInt(off, 10, 64)
	e, err2 := strconv.ParseInt(epoch, 10, 32)
	if err1 != nil || err2 != nil || o < 0 || e < 0 {
		return SnapshotID{}, fmt.Errorf("%w: file name %s", ErrCorruptCheckpoint, name)
	}
	return SnapshotID{EndOffset: o, Epoch: int32(e)}, nil
}
