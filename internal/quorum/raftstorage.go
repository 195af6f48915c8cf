package quorum

import (
	"fmt"
	"slices"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// raftStorage is the raft.Storage the RawNode reads: an in-memory copy of
// the durable entries after the latest snapshot (the metadata log is small,
// and its tail is replayed at start-up anyway) with the static voter set as
// ConfState. Only the voter's loop goroutine touches it. Entries are never
// changed in place: truncation and compaction build new slices, so slices
// handed out stay valid.
type raftStorage struct {
	hard *raftpb.HardState
	conf *raftpb.ConfState
	// snap is the latest snapshot (nil: none yet).
	snap *raftpb.Snapshot
	// offset is the index just before entries[0] (0, or an index covered by
	// snap) and offsetTerm its term: Raft asks for it to check appends.
	offset     uint64
	offsetTerm uint64
	entries    []*raftpb.Entry // entries[i] has index offset+1+i
}

func (s *raftStorage) InitialState() (*raftpb.HardState, *raftpb.ConfState, error) {
	return proto.Clone(s.hard).(*raftpb.HardState), proto.Clone(s.conf).(*raftpb.ConfState), nil
}

func (s *raftStorage) lastIndex() uint64 { return s.offset + uint64(len(s.entries)) }

func (s *raftStorage) Entries(lo, hi, maxSize uint64) ([]*raftpb.Entry, error) {
	last := s.lastIndex()
	if lo <= s.offset {
		return nil, raft.ErrCompacted
	}
	if hi > last+1 || lo > hi {
		return nil, fmt.Errorf("quorum: entries [%d,%d) out of range, last index %d", lo, hi, last)
	}
	if lo == hi {
		return nil, nil
	}
	out := s.entries[lo-s.offset-1 : hi-s.offset-1]
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
	switch {
	case i == s.offset:
		return s.offsetTerm, nil
	case i < s.offset:
		return 0, raft.ErrCompacted
	case i > s.lastIndex():
		return 0, raft.ErrUnavailable
	}
	return s.entries[i-s.offset-1].GetTerm(), nil
}

func (s *raftStorage) LastIndex() (uint64, error) { return s.lastIndex(), nil }

func (s *raftStorage) FirstIndex() (uint64, error) { return s.offset + 1, nil }

// Snapshot returns the latest snapshot. Raft asks for it only to send a
// follower entries compacted away, which happens only after one was taken.
func (s *raftStorage) Snapshot() (*raftpb.Snapshot, error) {
	if s.snap == nil {
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	return s.snap, nil
}

// append mirrors what the EntryStore durably stored.
func (s *raftStorage) append(entries []*raftpb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	first := entries[0].GetIndex()
	if first <= s.offset {
		return fmt.Errorf("quorum: append at index %d below the compacted index %d", first, s.offset)
	}
	keep, err := keepBefore(len(s.entries), first-s.offset)
	if err != nil {
		return err
	}
	s.entries = append(slices.Clip(s.entries[:keep]), entries...)
	return nil
}

// compact drops the entries up to and including index, which a snapshot at
// or after it covers.
func (s *raftStorage) compact(index uint64) error {
	if index <= s.offset {
		return nil
	}
	term, err := s.Term(index)
	if err != nil {
		return fmt.Errorf("quorum: compact to index %d: %w", index, err)
	}
	s.entries = slices.Clone(s.entries[index-s.offset:])
	s.offset, s.offsetTerm = index, term
	return nil
}

// applySnapshot replaces the whole log by a snapshot received from the leader.
func (s *raftStorage) applySnapshot(snap *raftpb.Snapshot) {
	s.snap = snap
	if cs := snap.GetMetadata().GetConfState(); cs != nil {
		s.conf = proto.Clone(cs).(*raftpb.ConfState)
	}
	s.offset, s.offsetTerm = snap.GetMetadata().GetIndex(), snap.GetMetadata().GetTerm()
	s.entries = nil
}
