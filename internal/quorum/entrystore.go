// Package quorum runs the metadata Raft quorum: a Voter (an etcd-raft
// RawNode stepped by its caller) that the Driver runs on one event loop, its
// durable storage (entries as record batches in the __cluster_metadata-0
// log, a quorum-state file for the hard state, snapshots as checkpoint
// files with the log compacted behind them) and its transport behind an
// interface: TCPTransport, our framed raft RPC between voters, or an
// in-memory network in tests. Entry and snapshot data are opaque here; the
// metadata package decodes them. docs/quorum.md describes the whole.
package quorum

import (
	"fmt"
	"slices"
	"sync"

	"go.etcd.io/raft/v3/raftpb"
)

// EntryStore is the durable home of the Raft log entries.
type EntryStore interface {
	// Load returns every stored entry in index order. The first is at
	// index 1, or just after a point the log was compacted or reset to.
	Load() ([]*raftpb.Entry, error)
	// Append stores entries durably before it returns. The first entry's
	// index may be at or below the last stored one: the conflicting suffix
	// is removed first, as Raft asks of its storage.
	Append(entries []*raftpb.Entry) error
	// Compact drops entries up to and including index, which a durable
	// snapshot covers. It may keep some of them (whole segments go at once).
	Compact(index uint64) error
	// Reset drops every entry: the log restarts empty after index, the
	// index of a snapshot received from the leader.
	Reset(index uint64) error
	// Close releases the store.
	Close() error
}

// MemoryEntryStore keeps entries in memory: tests, and simulations whose
// "disk" survives a restart because the store object does.
type MemoryEntryStore struct {
	mu      sync.Mutex
	offset  uint64          // index just before entries[0]
	entries []*raftpb.Entry // entries[i] has index offset+1+i
}

// NewMemoryEntryStore returns an empty store.
func NewMemoryEntryStore() *MemoryEntryStore { return &MemoryEntryStore{} }

// Load returns a copy of the stored entries.
func (s *MemoryEntryStore) Load() ([]*raftpb.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.entries), nil
}

// Append stores entries, truncating a conflicting suffix.
func (s *MemoryEntryStore) Append(entries []*raftpb.Entry) error {
	if len(entries) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first := entries[0].GetIndex()
	if first <= s.offset {
		return fmt.Errorf("quorum: append at index %d below the compacted index %d", first, s.offset)
	}
	keep, err := keepBefore(len(s.entries), first-s.offset)
	if err != nil {
		return err
	}
	s.entries = append(slices.Clone(s.entries[:keep]), entries...)
	return nil
}

// Compact drops entries up to index.
func (s *MemoryEntryStore) Compact(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if index <= s.offset {
		return nil
	}
	drop := min(index-s.offset, uint64(len(s.entries)))
	s.entries = slices.Clone(s.entries[drop:])
	s.offset += drop
	return nil
}

// Reset empties the store, the next entry at index+1.
func (s *MemoryEntryStore) Reset(index uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offset, s.entries = index, nil
	return nil
}

// Close does nothing.
func (s *MemoryEntryStore) Close() error { return nil }

// keepBefore returns how many of n stored entries (relative indexes 1..n)
// stay when appending from relative index first: a gap after the last entry
// is an error.
func keepBefore(n int, first uint64) (int, error) {
	if first == 0 || first > uint64(n)+1 {
		return 0, fmt.Errorf("quorum: append at index %d leaves a gap after last index %d", first, n)
	}
	return int(first - 1), nil
}
