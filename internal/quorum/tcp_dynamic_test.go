package quorum

import (
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// tcpDynNode is one node of a dynamic quorum over real TCP.
type tcpDynNode struct {
	id      int32
	dir     kafka.UUID
	addr    string
	tr      *TCPTransport
	d       *Driver
	applied *appliedLog
}

func (n *tcpDynNode) member() Member {
	host, port, _ := net.SplitHostPort(n.addr)
	p, _ := strconv.Atoi(port)
	return Member{ID: n.id, DirectoryID: n.dir, Endpoints: []Endpoint{{Name: "CONTROLLER", Host: host, Port: int32(p)}}}
}

func startTCPDynNode(t *testing.T, id int32, dir kafka.UUID, bootstrap func(*tcpDynNode) []Member) *tcpDynNode {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n := &tcpDynNode{id: id, dir: dir, addr: ln.Addr().String(), applied: &appliedLog{}}
	n.tr, err = NewTCPTransport(TCPOptions{ClusterID: "c1", NodeID: id, Dynamic: true, DirectoryID: dir, Advertised: n.addr,
		BackoffMin: 10 * time.Millisecond, BackoffMax: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var boot []Member
	if bootstrap != nil {
		boot = bootstrap(n)
	}
	n.d, err = New(Options{NodeID: id, Dynamic: true, Bootstrap: boot, ElectionTimeout: 200 * time.Millisecond, TickInterval: 20 * time.Millisecond,
		FS: vfs.Default, Dir: t.TempDir(), Store: NewMemoryEntryStore(), Transport: n.tr, Apply: n.applied.apply,
		OnMembership: func(ms Membership) { n.tr.SetMembers(ms, "CONTROLLER") }})
	if err != nil {
		t.Fatal(err)
	}
	n.tr.Serve(ln)
	n.tr.Start(n.d)
	n.d.Start()
	t.Cleanup(func() { stop(t, n.d); n.tr.Stop() })
	return n
}

// TestTCPDynamicQuorumAddsAJoiningController: a standalone controller adds
// one started with no voters (it knows nobody: it answers the leader it
// learns from the hello), and a node whose directory id differs from the
// voter's is refused.
func TestTCPDynamicQuorumAddsAJoiningController(t *testing.T) {
	dir1, _ := kafka.RandomUUID()
	dir2, _ := kafka.RandomUUID()
	n1 := startTCPDynNode(t, 1, dir1, func(n *tcpDynNode) []Member { return []Member{n.member()} })
	n2 := startTCPDynNode(t, 2, dir2, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	testutil.Eventually(t, 10*time.Second, func() bool { return n1.d.Status().IsLeader }, "node 1 leads")
	if _, err := n1.d.Propose(ctx, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := n1.d.AddVoter(ctx, n2.member(), 10*time.Second); err != nil {
		t.Fatalf("add node 2: %v", err)
	}
	if _, err := n1.d.Propose(ctx, []byte("b")); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		return slices.Equal(n2.applied.data(), []string{"a", "b"}) && len(n2.d.Membership().Voters()) == 2
	}, "node 2 a voter with the data")

	// A node 3 whose directory is not the one the voter set names gets
	// nothing: the add times out and rolls back.
	dir3, _ := kafka.RandomUUID()
	n3 := startTCPDynNode(t, 3, dir3, nil)
	wrong := n3.member()
	wrong.DirectoryID, _ = kafka.RandomUUID()
	if err := n1.d.AddVoter(ctx, wrong, 500*time.Millisecond); !errors.Is(err, ErrChangeTimedOut) {
		t.Fatalf("adding node 3 under another directory id: %v, want ErrChangeTimedOut", err)
	}
	if got := n3.applied.data(); len(got) != 0 {
		t.Fatalf("node 3 applied %v from a leader that addressed another directory", got)
	}
}
