package quorum

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/vfs"
)

// SnapshotStore keeps the state machine snapshots of one voter.
type SnapshotStore interface {
	// Latest returns the newest durable snapshot, or nil when there is none.
	Latest() (*raftpb.Snapshot, error)
	// Save writes a snapshot durably (and may drop older ones).
	Save(snap *raftpb.Snapshot) error
}

// CheckpointSuffix is the file suffix of a metadata snapshot, as Kafka's.
const CheckpointSuffix = ".checkpoint"

// CheckpointName names the snapshot whose next offset (Raft index of its
// last entry) is endOffset and whose last entry has epoch (Raft term), as
// Kafka names __cluster_metadata-0 snapshots.
func CheckpointName(endOffset uint64, epoch uint64) string {
	return fmt.Sprintf("%020d-%010d%s", endOffset, epoch, CheckpointSuffix)
}

// checkpointMagic opens every checkpoint file; the version follows it.
const (
	checkpointMagic   = "SLSNAP"
	checkpointVersion = 0
	// checkpointFixed is magic, version u16, index u64, term u64, voter
	// count u32, data length u32: the bytes before voters and data.
	checkpointFixed = len(checkpointMagic) + 2 + 8 + 8 + 4 + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorruptCheckpoint wraps every checkpoint decoding failure.
var ErrCorruptCheckpoint = errors.New("quorum: corrupt checkpoint")

// EncodeCheckpoint lays a snapshot out as a checkpoint file: magic, version,
// index, term, voters (u64 each), data, then a CRC-32C of all before it.
func EncodeCheckpoint(snap *raftpb.Snapshot) []byte {
	md := snap.GetMetadata()
	voters := md.GetConfState().GetVoters()
	b := make([]byte, 0, checkpointFixed+8*len(voters)+len(snap.GetData())+4)
	b = append(b, checkpointMagic...)
	b = binary.BigEndian.AppendUint16(b, checkpointVersion)
	b = binary.BigEndian.AppendUint64(b, md.GetIndex())
	b = binary.BigEndian.AppendUint64(b, md.GetTerm())
	b = binary.BigEndian.AppendUint32(b, uint32(len(voters)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(snap.GetData())))
	for _, v := range voters {
		b = binary.BigEndian.AppendUint64(b, v)
	}
	b = append(b, snap.GetData()...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// DecodeCheckpoint parses what EncodeCheckpoint wrote.
func DecodeCheckpoint(b []byte) (*raftpb.Snapshot, error) {
	if len(b) < checkpointFixed+4 || string(b[:len(checkpointMagic)]) != checkpointMagic {
		return nil, fmt.Errorf("%w: no checkpoint header", ErrCorruptCheckpoint)
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorruptCheckpoint)
	}
	p := body[len(checkpointMagic):]
	if v := binary.BigEndian.Uint16(p); v != checkpointVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrCorruptCheckpoint, v, checkpointVersion)
	}
	index, term := binary.BigEndian.Uint64(p[2:]), binary.BigEndian.Uint64(p[10:])
	nVoters, dataLen := uint64(binary.BigEndian.Uint32(p[18:])), uint64(binary.BigEndian.Uint32(p[22:]))
	p = p[26:]
	if nVoters*8+dataLen != uint64(len(p)) {
		return nil, fmt.Errorf("%w: %d voters and %d data bytes in %d bytes", ErrCorruptCheckpoint, nVoters, dataLen, len(p))
	}
	conf := &raftpb.ConfState{}
	for i := range nVoters {
		conf.Voters = append(conf.Voters, binary.BigEndian.Uint64(p[i*8:]))
	}
	return &raftpb.Snapshot{
		Data:     slices.Clone(p[nVoters*8:]),
		Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(index), Term: proto.Uint64(term), ConfState: conf},
	}, nil
}

// FileSnapshotStore keeps snapshots as checkpoint files in the metadata log
// directory, each written atomically and fsynced. Saving a snapshot removes
// the older ones: the log behind the newest is compacted, so they would
// never be used again.
type FileSnapshotStore struct {
	fs  vfs.FS
	dir string
	log *slog.Logger
}

// NewFileSnapshotStore returns the store of dir (…/__cluster_metadata-0).
func NewFileSnapshotStore(fsys vfs.FS, dir string, logger *slog.Logger) *FileSnapshotStore {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &FileSnapshotStore{fs: fsys, dir: dir, log: logger}
}

func (s *FileSnapshotStore) names() ([]string, error) {
	all, err := s.fs.List(s.dir)
	if vfs.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("quorum: list snapshots in %s: %w", s.dir, err)
	}
	var out []string
	for _, n := range all {
		// The zero-padded names sort by offset, then epoch.
		if strings.HasSuffix(n, CheckpointSuffix) && len(n) == len(CheckpointName(0, 0)) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Latest reads the newest checkpoint. A corrupt newest checkpoint is an
// error, not skipped: the log behind it may be gone.
func (s *FileSnapshotStore) Latest() (*raftpb.Snapshot, error) {
	names, err := s.names()
	if err != nil || len(names) == 0 {
		return nil, err
	}
	name := names[len(names)-1]
	b, err := vfs.ReadFile(s.fs, filepath.Join(s.dir, name))
	if err != nil {
		return nil, fmt.Errorf("quorum: read snapshot %s: %w", name, err)
	}
	snap, err := DecodeCheckpoint(b)
	if err != nil {
		return nil, fmt.Errorf("quorum: snapshot %s: %w", name, err)
	}
	if want := CheckpointName(snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm()); want != name {
		return nil, fmt.Errorf("quorum: snapshot %s holds %s: %w", name, want, ErrCorruptCheckpoint)
	}
	return snap, nil
}

// Save writes the checkpoint and removes older ones.
func (s *FileSnapshotStore) Save(snap *raftpb.Snapshot) error {
	md := snap.GetMetadata()
	name := CheckpointName(md.GetIndex(), md.GetTerm())
	if err := s.fs.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("quorum: snapshot directory %s: %w", s.dir, err)
	}
	if err := s.fs.SyncDir(filepath.Dir(s.dir)); err != nil {
		return fmt.Errorf("quorum: snapshot directory %s: %w", s.dir, err)
	}
	if err := vfs.WriteFileAtomic(s.fs, filepath.Join(s.dir, name), EncodeCheckpoint(snap)); err != nil {
		return fmt.Errorf("quorum: write snapshot %s: %w", name, err)
	}
	names, err := s.names()
	if err != nil {
		return err
	}
	for _, old := range names {
		if old >= name {
			continue
		}
		if err := s.fs.Remove(filepath.Join(s.dir, old)); err != nil && !vfs.IsNotExist(err) {
			// The new snapshot is durable; an old file left over is only space.
			s.log.Warn("old snapshot not removed", "file", old, "err", err)
		}
	}
	s.log.Info("metadata snapshot written", "file", name, "bytes", len(snap.GetData()))
	return nil
}
