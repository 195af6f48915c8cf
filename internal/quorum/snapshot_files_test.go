package quorum

import (
	"bytes"
	"errors"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/vfs"
)

func TestLatestIDAndReadCheckpoint(t *testing.T) {
	fsys := vfs.NewMem()
	dir := "/meta/__cluster_metadata-0"
	mkdirDurable(t, fsys, dir)
	s := NewFileSnapshotStore(fsys, dir, nil)
	if _, ok, err := s.LatestID(); ok || err != nil {
		t.Fatalf("empty store: LatestID ok=%v err=%v", ok, err)
	}
	snap := func(index, term uint64) *raftpb.Snapshot {
		return &raftpb.Snapshot{Data: []byte{byte(index)}, Metadata: &raftpb.SnapshotMetadata{
			Index: proto.Uint64(index), Term: proto.Uint64(term), ConfState: &raftpb.ConfState{Voters: []uint64{1}},
		}}
	}
	for _, sn := range []*raftpb.Snapshot{snap(12, 2), snap(40, 3)} {
		if err := s.Save(sn); err != nil {
			t.Fatal(err)
		}
	}
	id, ok, err := s.LatestID()
	if err != nil || !ok || id != (SnapshotID{EndOffset: 40, Epoch: 3}) {
		t.Fatalf("LatestID = %+v %v %v, want 40-3", id, ok, err)
	}
	b, err := s.ReadCheckpoint(id)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, EncodeCheckpoint(snap(40, 3))) {
		t.Fatal("ReadCheckpoint bytes differ from the saved checkpoint")
	}
	// The older one was replaced: an observer asking for it must look again.
	for _, gone := range []SnapshotID{{EndOffset: 12, Epoch: 2}, {EndOffset: 40, Epoch: 2}, {EndOffset: -1, Epoch: 0}} {
		if _, err := s.ReadCheckpoint(gone); !errors.Is(err, ErrSnapshotNotFound) {
			t.Fatalf("ReadCheckpoint(%+v) err = %v, want ErrSnapshotNotFound", gone, err)
		}
	}
}

func TestParseCheckpointNameRefusesOthers(t *testing.T) {
	for _, name := range []string{"x.checkpoint", "00000000000000000001.checkpoint", "-1-2.checkpoint", "00000000000000000001-0000000002.log"} {
		if _, err := parseCheckpointName(name); !errors.Is(err, ErrCorruptCheckpoint) {
			t.Fatalf("parseCheckpointName(%q) err = %v", name, err)
		}
	}
	id, err := parseCheckpointName(CheckpointName(7, 9))
	if err != nil || id != (SnapshotID{EndOffset: 7, Epoch: 9}) {
		t.Fatalf("round trip = %+v %v", id, err)
	}
}
