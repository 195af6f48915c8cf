package quorum

import (
	"context"
	"errors"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/vfs"
)

type offsetImage int64

func (o offsetImage) Offset() int64 { return int64(o) }

// voterProposer runs ProposeAfter on a lone voter synchronously.
type voterProposer struct{ v *Voter }

func (p voterProposer) ProposeAfter(_ context.Context, data []byte, imageOffset int64) (int64, error) {
	var off int64
	var err error
	p.v.ProposeAfter(data, imageOffset, func(o int64, e error) { off, err = o, e })
	if perr := p.v.Process(); perr != nil {
		return -1, perr
	}
	return off, err
}

// capture is a Transport that keeps what is sent.
type capture struct{ sent []*raftpb.Message }

func (c *capture) Send(msgs []*raftpb.Message) { c.sent = append(c.sent, msgs...) }

func TestProposeAfterRefusesUnreadyLeaderAndStaleImages(t *testing.T) {
	fsys := vfs.NewMem()
	mkdirDurable(t, fsys, "/q")
	var applied int64 = -1
	tr := &capture{}
	v, err := NewVoter(Options{NodeID: 0, Voters: []int32{0, 1, 2}, FS: fsys, Dir: "/q", Store: NewMemoryEntryStore(), Transport: tr,
		Apply: func(c Committed) error { applied = c.Offset; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	step := func(typ raftpb.MessageType, term, index uint64) {
		t.Helper()
		m := &raftpb.Message{Type: typ.Enum(), From: proto.Uint64(RaftID(1)), To: proto.Uint64(RaftID(0)), Term: proto.Uint64(term), Index: proto.Uint64(index)}
		if err := v.Step(m); err != nil {
			t.Fatal(err)
		}
		if err := v.Process(); err != nil {
			t.Fatal(err)
		}
	}
	if err := v.Campaign(); err != nil {
		t.Fatal(err)
	}
	if err := v.Process(); err != nil {
		t.Fatal(err)
	}
	step(raftpb.MsgPreVoteResp, 1, 0)
	step(raftpb.MsgVoteResp, 1, 0)
	if !v.Status().IsLeader {
		t.Fatalf("not leader: %+v", v.Status())
	}
	// Leader, but its first entry of the term is not committed yet.
	var gotErr error
	v.ProposeAfter([]byte("a"), -1, func(_ int64, err error) { gotErr = err })
	if !errors.Is(gotErr, ErrLeaderNotReady) || !errors.Is(gotErr, ErrNotLeader) {
		t.Fatalf("unready leader: %v", gotErr)
	}
	step(raftpb.MsgAppResp, 1, 1)

	image := offsetImage(-1)
	read := image.Offset() // the operation reads its image
	var off int64 = -2
	v.ProposeAfter([]byte("a"), read, func(o int64, err error) {
		if err != nil {
			t.Error(err)
		}
		off = o
	})
	if err := v.Process(); err != nil {
		t.Fatal(err)
	}
	step(raftpb.MsgAppResp, 1, 2)
	if off != 1 || applied != 1 {
		t.Fatalf("first proposal at %d, applied %d", off, applied)
	}
	// The operation read the image before "a" was applied to it.
	if _, err := (voterProposer{v}).ProposeAfter(context.Background(), []byte("b"), read); !errors.Is(err, ErrStaleImage) {
		t.Fatalf("stale image: %v", err)
	}
	image = offsetImage(applied)
	read = image.Offset()
	off = -2
	v.ProposeAfter([]byte("b"), read, func(o int64, err error) { off, gotErr = o, err })
	if err := v.Process(); err != nil {
		t.Fatal(err)
	}
	step(raftpb.MsgAppResp, 1, 3)
	if off != 2 || gotErr != nil {
		t.Fatalf("fresh image: offset %d, %v", off, gotErr)
	}
}
