package quorum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// dynCluster runs dynamic-quorum drivers over a MemNetwork, each with its
// own directory, entry store, list state machine and snapshots.
type dynCluster struct {
	t        *testing.T
	net      *MemNetwork
	drivers  map[int32]*Driver
	machines map[int32]*listMachine
	dirs     map[int32]string
	stores   map[int32]*MemoryEntryStore
	dirIDs   map[int32]kafka.UUID
	// snapshotBytes is MaxBytesBetween (0: large, no snapshots in a test).
	snapshotBytes int64
}

func newDynCluster(t *testing.T) *dynCluster {
	c := &dynCluster{t: t, net: NewMemNetwork(), drivers: map[int32]*Driver{}, machines: map[int32]*listMachine{},
		dirs: map[int32]string{}, stores: map[int32]*MemoryEntryStore{}, dirIDs: map[int32]kafka.UUID{}}
	t.Cleanup(func() {
		for id, d := range c.drivers {
			c.net.Unregister(RaftID(id))
			stop(t, d)
		}
	})
	return c
}

func (c *dynCluster) member(id int32) Member {
	return Member{ID: id, DirectoryID: c.dirIDs[id], Endpoints: []Endpoint{{Name: "CONTROLLER", Host: "localhost", Port: 9000 + id}}}
}

// format gives a node a fresh directory, store and directory id, as
// storage format does.
func (c *dynCluster) format(id int32) {
	dir, err := kafka.RandomUUID()
	if err != nil {
		c.t.Fatal(err)
	}
	c.dirs[id], c.stores[id], c.dirIDs[id] = c.t.TempDir(), NewMemoryEntryStore(), dir
}

// start (re)starts a node on its directory; bootstrap are the initial
// voters of a new quorum (nil: joining, or restarting).
func (c *dynCluster) start(id int32, bootstrap []Member) {
	c.machines[id] = &listMachine{}
	bytes := c.snapshotBytes
	if bytes == 0 {
		bytes = 1 << 30
	}
	d, err := New(Options{
		NodeID: id, Dynamic: true, Bootstrap: bootstrap,
		ElectionTimeout: 100 * time.Millisecond, TickInterval: 10 * time.Millisecond,
		FS: vfs.Default, Dir: c.dirs[id], Store: c.stores[id], Transport: c.net.Transport(RaftID(id)),
		Apply: c.machines[id].apply, Snapshots: snapshotOptions(vfs.Default, c.dirs[id], c.machines[id], bytes, 2),
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.drivers[id] = d
	c.net.Register(RaftID(id), d)
	d.Start()
}

func (c *dynCluster) crash(id int32) {
	c.net.Unregister(RaftID(id))
	stop(c.t, c.drivers[id])
	delete(c.drivers, id)
}

// leader waits for one of among to lead with the others following it.
func (c *dynCluster) leader(among ...int32) int32 {
	var leader int32 = -1
	testutil.Eventually(c.t, 10*time.Second, func() bool {
		leader = -1
		for _, id := range among {
			if c.drivers[id].Status().IsLeader {
				leader = id
			}
		}
		for _, id := range among {
			if leader < 0 || c.drivers[id].Status().Leader != leader {
				return false
			}
		}
		return true
	}, "a leader")
	return leader
}

func (c *dynCluster) propose(data string, among ...int32) {
	c.t.Helper()
	testutil.Eventually(c.t, 10*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, err := c.drivers[c.leader(among...)].Propose(ctx, []byte(data))
		return err == nil
	}, "propose %s", data)
}

// voters waits until every node of among has applied exactly these voters.
func (c *dynCluster) voters(want []int32, among ...int32) {
	c.t.Helper()
	testutil.Eventually(c.t, 10*time.Second, func() bool {
		for _, id := range among {
			var got []int32
			for _, m := range c.drivers[id].Membership().Voters() {
				if m.DirectoryID != c.dirIDs[m.ID] || m.Endpoints[0].Port != 9000+m.ID {
					return false
				}
				got = append(got, m.ID)
			}
			if !slices.Equal(got, want) {
				return false
			}
		}
		return true
	}, "voters %v on %v", want, among)
}

// sameData waits until every node of among has applied want.
func (c *dynCluster) sameData(want []string, among ...int32) {
	c.t.Helper()
	testutil.Eventually(c.t, 10*time.Second, func() bool {
		for _, id := range among {
			if !slices.Equal(c.machines[id].data(), want) {
				return false
			}
		}
		return true
	}, "the same data everywhere")
}

func (c *dynCluster) add(leader int32, m Member, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	return c.drivers[leader].AddVoter(ctx, m, timeout)
}

func (c *dynCluster) remove(leader, id int32, dir kafka.UUID) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.drivers[leader].RemoveVoter(ctx, id, dir)
}

// TestDynamicQuorumGrowsAndShrinks grows a standalone voter to three with
// AddVoter and shrinks it back to one with RemoveVoter, the leader
// included, checking every node's membership and data at each step.
func TestDynamicQuorumGrowsAndShrinks(t *testing.T) {
	c := newDynCluster(t)
	for _, id := range []int32{1, 2, 3} {
		c.format(id)
	}
	c.start(1, []Member{c.member(1)})
	c.start(2, nil)
	c.start(3, nil)
	want := []string{"a"}
	c.propose("a", 1)
	for _, id := range []int32{2, 3} {
		if err := c.add(c.leader(1), c.member(id), 5*time.Second); err != nil {
			t.Fatalf("add %d: %v", id, err)
		}
	}
	c.voters([]int32{1, 2, 3}, 1, 2, 3)
	c.propose("b", 1, 2, 3)
	want = append(want, "b")
	c.sameData(want, 1, 2, 3)

	leader := c.leader(1, 2, 3)
	if err := c.add(leader, c.member(2), time.Second); !errors.Is(err, ErrDuplicateVoter) {
		t.Fatalf("adding voter 2 again: %v, want ErrDuplicateVoter", err)
	}
	other, _ := kafka.RandomUUID()
	if err := c.remove(leader, 3, other); !errors.Is(err, ErrVoterNotFound) {
		t.Fatalf("removing voter 3 with another directory id: %v, want ErrVoterNotFound", err)
	}
	var follower int32 = 1
	for follower == leader {
		follower++
	}
	if err := c.remove(follower, 3, c.dirIDs[3]); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("removing on a follower: %v, want ErrNotLeader", err)
	}

	// The leader removes itself, then steps down; the other two elect.
	if err := c.remove(leader, leader, c.dirIDs[leader]); err != nil {
		t.Fatalf("remove leader %d: %v", leader, err)
	}
	rest := slices.DeleteFunc([]int32{1, 2, 3}, func(id int32) bool { return id == leader })
	c.voters(rest, rest...)
	c.propose("c", rest...)
	want = append(want, "c")
	c.sameData(want, rest...)

	last := rest[0]
	if err := c.remove(c.leader(rest...), rest[1], c.dirIDs[rest[1]]); err != nil {
		t.Fatalf("remove %d: %v", rest[1], err)
	}
	c.voters([]int32{last}, last)
	if err := c.remove(c.leader(last), last, c.dirIDs[last]); !errors.Is(err, ErrVoterNotFound) {
		t.Fatalf("removing the last voter: %v, want ErrVoterNotFound", err)
	}
	c.propose("d", last)
	want = append(want, "d")
	c.sameData(want, last)
}

// TestAddVoterRollsBackALaggingLearner: a new voter that never catches up
// (it is down) times out with ErrChangeTimedOut and its learner is removed
// again; meanwhile other changes are refused as pending, and afterwards a
// live node is added.
func TestAddVoterRollsBackALaggingLearner(t *testing.T) {
	c := newDynCluster(t)
	c.format(1)
	c.format(2)
	c.format(4)
	c.start(1, []Member{c.member(1)})
	c.propose("a", 1)
	errc := make(chan error, 1)
	go func() { errc <- c.add(1, c.member(4), 500*time.Millisecond) }()
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, ok := c.drivers[1].Membership().Find(4)
		return ok
	}, "node 4 a learner")
	if err := c.remove(1, 1, c.dirIDs[1]); !errors.Is(err, ErrChangePending) {
		t.Fatalf("a change while another runs: %v, want ErrChangePending", err)
	}
	if err := <-errc; !errors.Is(err, ErrChangeTimedOut) {
		t.Fatalf("adding a node that is down: %v, want ErrChangeTimedOut", err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, ok := c.drivers[1].Membership().Find(4)
		return !ok
	}, "the learner removed again")
	c.start(2, nil)
	testutil.Eventually(t, 10*time.Second, func() bool { return c.add(1, c.member(2), 5*time.Second) == nil }, "add node 2")
	c.voters([]int32{1, 2}, 1, 2)
	c.propose("b", 1, 2)
	c.sameData([]string{"a", "b"}, 1, 2)
}

// TestMembershipSurvivesRestartsAndSnapshots: the voter set, with
// directory ids and endpoints, is rebuilt from the log and from snapshots
// after every node restarts, and a node added after the log was compacted
// gets it with the snapshot.
func TestMembershipSurvivesRestartsAndSnapshots(t *testing.T) {
	c := newDynCluster(t)
	c.snapshotBytes = 64
	for _, id := range []int32{1, 2, 3, 4} {
		c.format(id)
	}
	c.start(1, []Member{c.member(1)})
	c.start(2, nil)
	if err := c.add(c.leader(1), c.member(2), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 30 {
		s := fmt.Sprintf("entry-%02d", i)
		c.propose(s, 1, 2)
		want = append(want, s)
	}
	c.sameData(want, 1, 2)
	c.crash(1)
	c.crash(2)
	c.start(1, []Member{c.member(1)}) // a bootstrap on a used log is ignored
	c.start(2, nil)
	c.voters([]int32{1, 2}, 1, 2)
	c.sameData(want, 1, 2)
	if c.stores[1].first() <= 1 {
		t.Fatalf("the log was not compacted (first index %d): the test needs a snapshot", c.stores[1].first())
	}
	c.start(3, nil)
	if err := c.add(c.leader(1, 2), c.member(3), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.voters([]int32{1, 2, 3}, 1, 2, 3)
	c.propose("after", 1, 2, 3)
	c.sameData(append(want, "after"), 1, 2, 3)
	if c.machines[3].restores == 0 {
		t.Fatal("node 3 caught up without a snapshot")
	}
}

// TestReplaceAVotersDisk: a voter whose disk is lost is removed by its old
// directory id, formatted anew (a new directory id) and added again.
func TestReplaceAVotersDisk(t *testing.T) {
	c := newDynCluster(t)
	for _, id := range []int32{1, 2, 3} {
		c.format(id)
	}
	initial := []Member{c.member(1), c.member(2), c.member(3)}
	for _, id := range []int32{1, 2, 3} {
		c.start(id, initial)
	}
	c.voters([]int32{1, 2, 3}, 1, 2, 3)
	c.propose("a", 1, 2, 3)
	c.crash(3)
	old := c.dirIDs[3]
	if err := c.remove(c.leader(1, 2), 3, old); err != nil {
		t.Fatal(err)
	}
	c.voters([]int32{1, 2}, 1, 2)
	c.format(3)
	c.start(3, nil)
	if err := c.add(c.leader(1, 2), c.member(3), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.voters([]int32{1, 2, 3}, 1, 2, 3)
	c.propose("b", 1, 2, 3)
	c.sameData([]string{"a", "b"}, 1, 2, 3)
	if m, _ := c.drivers[1].Membership().Find(3); m.DirectoryID == old {
		t.Fatal("voter 3 kept its old directory id")
	}
}

// TestStaticQuorumRefusesChanges: controller.quorum.voters (kraft.version
// 0) cannot change, as Kafka answers UNSUPPORTED_VERSION.
func TestStaticQuorumRefusesChanges(t *testing.T) {
	dir := t.TempDir()
	d, err := New(Options{NodeID: 0, Voters: []int32{0}, TickInterval: 10 * time.Millisecond, FS: vfs.Default, Dir: dir,
		Store: NewMemoryEntryStore(), Apply: (&appliedLog{}).apply, Clock: clock.Real{}})
	if err != nil {
		t.Fatal(err)
	}
	d.Start()
	defer stop(t, d)
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, err := d.Propose(context.Background(), []byte("x"))
		return err == nil
	}, "a leader")
	err = d.AddVoter(context.Background(), Member{ID: 1}, time.Second)
	if !errors.Is(err, ErrStaticQuorum) || err.Error() != "quorum: the voter set is static: Cluster doesn't support adding voter because the kraft.version feature is 0" {
		t.Fatalf("AddVoter on a static quorum: %v", err)
	}
}

// TestMembershipEncoding round-trips a membership and a snapshot's data.
func TestMembershipEncoding(t *testing.T) {
	dir, _ := kafka.RandomUUID()
	ms := Membership{Members: []Member{{ID: 2, DirectoryID: dir, Endpoints: []Endpoint{{Name: "CONTROLLER", Host: "h", Port: 9093}}, Learner: true}, {ID: 1}}}
	ms.sort()
	got, err := DecodeMembership(ms.Encode())
	if err != nil || len(got.Members) != 2 || got.Members[1].DirectoryID != dir || !got.Members[1].Learner || got.Members[1].Endpoints[0].Addr() != "h:9093" {
		t.Fatalf("decode: %+v %v", got, err)
	}
	gotMs, data, ok, err := UnwrapSnapshotData(wrapSnapshotData(ms, []byte("state")))
	if err != nil || !ok || string(data) != "state" || len(gotMs.Members) != 2 {
		t.Fatalf("unwrap: %v %v %q", ok, err, data)
	}
	if _, data, ok, err := UnwrapSnapshotData([]byte("plain")); ok || err != nil || string(data) != "plain" {
		t.Fatalf("unwrap of a static snapshot: %v %v %q", ok, err, data)
	}
	if _, err := DecodeMembership([]byte(`{"version":0,"members":[{"id":1,"directory_id":"AAAAAAAAAAAAAAAAAAAAAA"},{"id":1,"directory_id":"AAAAAAAAAAAAAAAAAAAAAA"}]}`)); err == nil {
		t.Fatal("a membership naming a node twice was accepted")
	}
	if got := ReplicaKeyString(3, dir); got != "ReplicaKey(id=3, directoryId=Optional["+dir.String()+"])" {
		t.Fatal(got)
	}
}

// first is the index of the store's first entry.
func (s *MemoryEntryStore) first() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.offset + 1
}
