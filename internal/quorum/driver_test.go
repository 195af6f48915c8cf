package quorum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// appliedLog records what a voter's state machine saw.
type appliedLog struct {
	mu      sync.Mutex
	entries []Committed
}

func (a *appliedLog) apply(c Committed) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if n := len(a.entries); n > 0 && a.entries[n-1].Offset >= c.Offset {
		return fmt.Errorf("offset %d applied after %d", c.Offset, a.entries[n-1].Offset)
	}
	a.entries = append(a.entries, c)
	return nil
}

func (a *appliedLog) data() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, e := range a.entries {
		out = append(out, string(e.Data))
	}
	return out
}

func stop(t *testing.T, d *Driver) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.Stop(ctx); err != nil {
		t.Fatalf("stop: %v", err)
	}
}

func TestSingleVoterRestartsFromDisk(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	start := func(applied *appliedLog) (*Driver, *LogEntryStore) {
		store, err := OpenLogEntryStore(vfs.Default, dir, clock.Real{}, logger)
		if err != nil {
			t.Fatal(err)
		}
		d, err := New(Options{NodeID: 0, Voters: []int32{0}, TickInterval: 10 * time.Millisecond, FS: vfs.Default, Dir: dir, Store: store, Apply: applied.apply})
		if err != nil {
			t.Fatal(err)
		}
		d.Start()
		return d, store
	}
	first := &appliedLog{}
	d, store := start(first)
	ctx := context.Background()
	var want []string
	last := int64(-1)
	for i := range 20 {
		data := fmt.Sprintf("entry-%d", i)
		off, err := d.Propose(ctx, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		if off <= last {
			t.Fatalf("offset %d after %d", off, last)
		}
		last = off
		want = append(want, data)
	}
	if got := first.data(); !slices.Equal(got, want) {
		t.Fatalf("applied %v, want %v", got, want)
	}
	// Status is published after the Ready that applied the entry.
	testutil.Eventually(t, 10*time.Second, func() bool {
		st := d.Status()
		return st.IsLeader && st.Leader == 0 && st.AppliedOffset == last && st.CommitOffset == last
	}, "status to show the last offset applied")
	stop(t, d)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Propose(ctx, []byte("late")); !errors.Is(err, ErrStopped) {
		t.Fatalf("propose after stop: %v", err)
	}

	second := &appliedLog{}
	d, store = start(second)
	defer store.Close()
	defer stop(t, d)
	select {
	case <-d.Replayed():
	case <-time.After(10 * time.Second):
		t.Fatal("replay did not finish")
	}
	if got := second.data(); !slices.Equal(got, want) {
		t.Fatalf("replayed %v, want %v", got, want)
	}
	if second.entries[len(second.entries)-1].Offset != last {
		t.Fatalf("replayed last offset %d, want %d", second.entries[len(second.entries)-1].Offset, last)
	}
	off, err := d.Propose(ctx, []byte("after-restart"))
	if err != nil || off <= last {
		t.Fatalf("propose after restart: %d %v", off, err)
	}
}

type cluster struct {
	t       *testing.T
	net     *MemNetwork
	ids     []int32
	drivers map[int32]*Driver
	applied map[int32]*appliedLog
	dirs    map[int32]string
	stores  map[int32]*MemoryEntryStore
}

func newCluster(t *testing.T, n int) *cluster {
	c := &cluster{t: t, net: NewMemNetwork(), drivers: map[int32]*Driver{}, applied: map[int32]*appliedLog{}}
	for i := range n {
		c.ids = append(c.ids, int32(i+1))
	}
	c.dirs, c.stores = map[int32]string{}, map[int32]*MemoryEntryStore{}
	for _, id := range c.ids {
		c.dirs[id], c.stores[id] = t.TempDir(), NewMemoryEntryStore()
		c.start(id)
	}
	t.Cleanup(func() {
		for _, d := range c.drivers {
			stop(t, d)
		}
	})
	return c
}

// start (re)starts a voter on its directory and store, with a fresh state machine.
func (c *cluster) start(id int32) {
	c.applied[id] = &appliedLog{}
	d, err := New(Options{
		NodeID: id, Voters: c.ids, ElectionTimeout: 100 * time.Millisecond, TickInterval: 10 * time.Millisecond,
		FS: vfs.Default, Dir: c.dirs[id], Store: c.stores[id], Transport: c.net.Transport(RaftID(id)),
		Apply: c.applied[id].apply,
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.drivers[id] = d
	c.net.Register(RaftID(id), d)
	d.Start()
}

// crash stops a voter and detaches it from the network.
func (c *cluster) crash(id int32) {
	c.net.Unregister(RaftID(id))
	stop(c.t, c.drivers[id])
}

// leader waits until exactly one voter among those given leads and the
// others agree, and returns it.
func (c *cluster) leader(among []int32) int32 {
	var leader int32 = -1
	testutil.Eventually(c.t, 10*time.Second, func() bool {
		leader = -1
		for _, id := range among {
			if c.drivers[id].Status().IsLeader {
				if leader != -1 {
					return false
				}
				leader = id
			}
		}
		if leader == -1 {
			return false
		}
		for _, id := range among {
			if c.drivers[id].Status().Leader != leader {
				return false
			}
		}
		return true
	}, "a leader")
	return leader
}

func (c *cluster) propose(id int32, data string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	off, err := c.drivers[id].Propose(ctx, []byte(data))
	if err != nil {
		c.t.Fatalf("propose %q on %d: %v", data, id, err)
	}
	return off
}

func TestThreeVotersElectCommitAndReelect(t *testing.T) {
	c := newCluster(t, 3)
	leader := c.leader(c.ids)
	c.propose(leader, "a")
	c.propose(leader, "b")
	for _, id := range c.ids {
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Equal(c.applied[id].data(), []string{"a", "b"}) }, "node %d to apply", id)
	}
	for _, id := range c.ids {
		if id != leader {
			_, err := c.drivers[id].Propose(context.Background(), []byte("x"))
			var nl NotLeaderError
			if !errors.As(err, &nl) || nl.Leader != leader {
				t.Fatalf("propose on follower %d: %v", id, err)
			}
		}
	}

	// Cut the leader off: the other two elect a new leader in a later epoch
	// and commit without it; the old leader steps down (CheckQuorum).
	oldEpoch := c.drivers[leader].Status().Epoch
	c.net.Isolate(RaftID(leader), []uint64{RaftID(1), RaftID(2), RaftID(3)})
	var rest []int32
	for _, id := range c.ids {
		if id != leader {
			rest = append(rest, id)
		}
	}
	newLeader := c.leader(rest)
	if newLeader == leader || c.drivers[newLeader].Status().Epoch <= oldEpoch {
		t.Fatalf("new leader %d epoch %d after %d epoch %d", newLeader, c.drivers[newLeader].Status().Epoch, leader, oldEpoch)
	}
	c.propose(newLeader, "c")
	testutil.Eventually(t, 10*time.Second, func() bool { return !c.drivers[leader].Status().IsLeader }, "old leader to step down")

	// Healed, the old leader catches up with the entry it missed.
	c.net.Heal()
	for _, id := range c.ids {
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Equal(c.applied[id].data(), []string{"a", "b", "c"}) }, "node %d to apply c", id)
	}
}

func TestProposeLostOnIsolatedLeader(t *testing.T) {
	c := newCluster(t, 3)
	leader := c.leader(c.ids)
	c.net.Isolate(RaftID(leader), []uint64{RaftID(1), RaftID(2), RaftID(3)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The isolated leader accepts the proposal but cannot commit it; after
	// healing, the new leader's entries overwrite it and it is reported lost.
	done := make(chan error, 1)
	go func() {
		_, err := c.drivers[leader].Propose(ctx, []byte("doomed"))
		done <- err
	}()
	var rest []int32
	for _, id := range c.ids {
		if id != leader {
			rest = append(rest, id)
		}
	}
	newLeader := c.leader(rest)
	c.propose(newLeader, "winner")
	c.net.Heal()
	select {
	case err := <-done:
		if !errors.Is(err, ErrProposalLost) && !errors.Is(err, ErrNotLeader) {
			t.Fatalf("doomed proposal: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("doomed proposal never resolved")
	}
	for _, id := range c.ids {
		testutil.Eventually(t, 10*time.Second, func() bool { return slices.Equal(c.applied[id].data(), []string{"winner"}) }, "node %d to apply winner", id)
	}
}

func TestCrashedLeaderRestartsAndCatchesUp(t *testing.T) {
	c := newCluster(t, 3)
	leader := c.leader(c.ids)
	c.propose(leader, "a")
	c.crash(leader)
	var rest []int32
	for _, id := range c.ids {
		if id != leader {
			rest = append(rest, id)
		}
	}
	newLeader := c.leader(rest)
	c.propose(newLeader, "b")
	// The restarted voter replays its own log, then learns "b" from the leader.
	c.start(leader)
	testutil.Eventually(t, 10*time.Second, func() bool {
		return slices.Equal(c.applied[leader].data(), []string{"a", "b"})
	}, "restarted voter to apply a and b")
	if got := c.leader(c.ids); got != newLeader {
		t.Fatalf("leader after restart %d, want %d (PreVote keeps the rejoining voter from disrupting)", got, newLeader)
	}
}

func TestStepDropsForeignMessages(t *testing.T) {
	d, err := New(Options{NodeID: 1, Voters: []int32{1}, FS: vfs.Default, Dir: t.TempDir(), Store: NewMemoryEntryStore(), Apply: func(Committed) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	d.Step(&raftpb.Message{Type: raftpb.MsgProp.Enum(), To: proto.Uint64(RaftID(1)), From: proto.Uint64(9)})
	d.Step(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), To: proto.Uint64(RaftID(5)), From: proto.Uint64(9)})
	if len(d.recvc) != 0 {
		t.Fatalf("%d foreign messages queued", len(d.recvc))
	}
	d.Step(&raftpb.Message{Type: raftpb.MsgHeartbeat.Enum(), To: proto.Uint64(RaftID(1)), From: proto.Uint64(9)})
	if len(d.recvc) != 1 {
		t.Fatal("message to this voter not queued")
	}
	stop(t, d)
}
