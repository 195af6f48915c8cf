package quorum

import (
	"fmt"
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// raftStorage is the raft.Storage the RawNode reads: an in-memory copy of
// the durable entries (the metadata log is small, and the whole of it is
// replayed at start-up anyway) with the static voter set as ConfState. Only
// the driver's loop goroutine touches it. Entries are never changed in
// place: truncation builds a new slice, so slices handed out stay valid.
type raftStorage struct {
	hard    *raftpb.HardState
	conf    *raftpb.ConfState
	entries []*raftpb.Entry // entries[i] has index i+1
}

func (s *raftStorage) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	return proto.Clone(s.hard).(*raftpb.HardState), proto.Clone(s.conf).(*raftpb.ConfState), nil
}

func (s *raftStorage) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	last := uint64(len(s.entries))
	if lo < 1 {
		return nil, raft.ErrCompacted
	}
	if hi > last+1 || lo > hi {
		return nil, fmt.Errorf("quorum: entries [%d,%d) out of range, last index %d", lo, hi, last)
	}
	if lo == hi {
		return nil, nil
	}
	out := s.entries[lo-1 : hi-1]
	size := uint64(0)
	for i, e := range out {
		size += uint64(proto.Size(e))
		if i > 0 && size > maxSize {
			out = out[:i]
			break
		}
	}
	return out[:len(out):len(out)], nil
}

func (s *raftStorage) Term(i uint64) (uint64, error) {
	if i == 0 {
		return 0, nil
	}
	if i > uint64(len(s.entries)) {
		return 0, raft.ErrUnavailable
	}
	return s.entries[i-1].GetTerm(), nil
}

func (s *raftStorage) LastIndex() (uint64, error) { return uint64(len(s.entries)), nil }

func (s *raftStorage) FirstIndex() (uint64, error) { return 1, nil }

// Snapshot is unavailable until the KRaft issue adds snapshots; since the
// log is never compacted, Raft never needs one.
func (s *raftStorage) Snapshot() (*raftpb.Snapshot, error) {
	return nil, raft.ErrSnapshotTemporarilyUnavailable
}

// append mirrors what the EntryStore durably stored.
func (s *raftStorage) append(entries []*raftpb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	keep, err := keepBefore(len(s.entries), entries[0].GetIndex())
	if err != nil {
		return err
	}
	s.entries = append(slices.Clip(s.entries[:keep]), entries...)
	return nil
}
