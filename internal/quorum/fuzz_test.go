package quorum

import (
	"bytes"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/vfs"
)

func FuzzDecodeHello(f *testing.F) {
	f.Add(hello{version: rpcVersion, clusterID: "c1", voters: "1@h:1,2@h:2", from: 1, to: 2}.encode())
	f.Add(encodeHelloReply(helloRefused, "no"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, err := decodeHello(b); err == nil && !bytes.Equal(h.encode(), b) {
			t.Fatalf("hello %+v does not re-encode to its bytes", h)
		}
		decodeHelloReply(b)
	})
}

func FuzzReadMessage(f *testing.F) {
	f.Add(frameBytes([]byte{kindMessage, 1, 2, 3}))
	f.Add(append(frameBytes([]byte{kindChunk, 1}), frameBytes([]byte{kindLastChunk, 2})...))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		for {
			if _, err := readMessage(r, 1<<16); err != nil {
				return
			}
		}
	})
}

func FuzzDecodeCheckpoint(f *testing.F) {
	f.Add(EncodeCheckpoint(&raftpb.Snapshot{Data: []byte("image"), Metadata: &raftpb.SnapshotMetadata{
		Index: proto.Uint64(7), Term: proto.Uint64(2), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		snap, err := DecodeCheckpoint(b)
		if err == nil && !bytes.Equal(EncodeCheckpoint(snap), b) {
			t.Fatal("checkpoint does not re-encode to its bytes")
		}
	})
}

// fuzzVoter is voter 1 of {1,2,3} in term 2 holding entries 1..4 (terms
// 1,1,2,2) with 3 committed: a follower with a log to conflict with.
func fuzzVoter(t testing.TB, withSnapshots bool) *Voter {
	fsys := vfs.NewMem()
	if err := fsys.MkdirAll("/q", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeHardState(fsys, "/q", &raftpb.HardState{Term: proto.Uint64(2), Vote: proto.Uint64(2), Commit: proto.Uint64(3)}); err != nil {
		t.Fatal(err)
	}
	store := NewMemoryEntryStore()
	if err := store.Append([]*raftpb.Entry{entry(1, 1, "a"), entry(2, 1, "b"), entry(3, 2, "c"), entry(4, 2, "d")}); err != nil {
		t.Fatal(err)
	}
	opts := Options{NodeID: 0, Voters: []int32{0, 1, 2}, FS: fsys, Dir: "/q", Store: store,
		Transport: NewMemNetwork().Transport(RaftID(0)), Apply: func(Committed) error { return nil }}
	if withSnapshots {
		opts.Snapshots = &SnapshotOptions{Store: NewFileSnapshotStore(fsys, "/q", nil), Clock: clock.NewManual(time.Unix(0, 0)),
			Take: func() ([]byte, error) { return nil, nil }, Restore: func(int64, int32, []byte) error { return nil }}
	}
	v, err := NewVoter(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Process(); err != nil {
		t.Fatal(err)
	}
	return v
}

// FuzzVoterStep feeds a follower arbitrary messages from its peers: the
// validation before Step must keep Raft from panicking, and the voter must
// keep working.
func FuzzVoterStep(f *testing.F) {
	seed := func(m *raftpb.Message) {
		b, _ := proto.Marshal(m)
		f.Add(b, false)
		f.Add(b, true)
	}
	app := &raftpb.Message{Type: raftpb.MsgApp.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(2),
		Index: proto.Uint64(2), LogTerm: proto.Uint64(1), Commit: proto.Uint64(5),
		Entries: []*raftpb.Entry{entry(3, 2, "x"), entry(4, 2, "y"), entry(5, 2, "z")}}
	seed(app)
	seed(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(3), Commit: proto.Uint64(4)})
	seed(&raftpb.Message{Type: raftpb.MsgVote.Enum(), From: proto.Uint64(3), To: proto.Uint64(1), Term: proto.Uint64(5), Index: proto.Uint64(9), LogTerm: proto.Uint64(4)})
	seed(&raftpb.Message{Type: raftpb.MsgSnap.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(2),
		Snapshot: &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(9), Term: proto.Uint64(2), ConfState: &raftpb.ConfState{Voters: []uint64{1, 2, 3}}}}})
	seed(&raftpb.Message{Type: raftpb.MsgAppResp.Enum(), From: proto.Uint64(3), To: proto.Uint64(1), Term: proto.Uint64(2), Index: proto.Uint64(40)})
	seed(&raftpb.Message{Type: raftpb.MsgTimeoutNow.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(2)})
	f.Fuzz(func(t *testing.T, b []byte, withSnapshots bool) {
		m := &raftpb.Message{}
		if proto.Unmarshal(b, m) != nil {
			return
		}
		v := fuzzVoter(t, withSnapshots)
		v.Step(m)
		v.Process()
		// Whatever it accepted, the voter must still take a message.
		v.Step(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), From: proto.Uint64(2), To: proto.Uint64(1), Term: proto.Uint64(1)})
		v.Process()
	})
}
