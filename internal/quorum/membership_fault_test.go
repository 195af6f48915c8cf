package quorum

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/testutil"
)

// TestLeaderCrashDuringAddVoter: the leader dies while a new voter is
// being added. The request fails; the survivors elect a leader and keep
// every committed entry; the new node is at most a learner (never a voter
// the change did not commit); AddVoter retried on the new leader
// completes, and the old leader, restarted, converges.
func TestLeaderCrashDuringAddVoter(t *testing.T) {
	c := newDynCluster(t)
	for _, id := range []int32{1, 2, 3, 4} {
		c.format(id)
	}
	initial := []Member{c.member(1), c.member(2), c.member(3)}
	for _, id := range []int32{1, 2, 3} {
		c.start(id, initial)
	}
	var want []string
	for i := range 10 {
		want = append(want, fmt.Sprintf("before-%d", i))
		c.propose(want[i], 1, 2, 3)
	}
	leader := c.leader(1, 2, 3)
	// Node 4 is down at first, so the change waits in its catch-up stage.
	errc := make(chan error, 1)
	go func() { errc <- c.add(leader, c.member(4), 20*time.Second) }()
	testutil.Eventually(t, 5*time.Second, func() bool {
		m, ok := c.drivers[leader].Membership().Find(4)
		return ok && m.Learner
	}, "node 4 a learner")
	c.crash(leader)
	if err := <-errc; err == nil {
		t.Fatal("AddVoter succeeded although its leader died")
	}
	rest := slices.DeleteFunc([]int32{1, 2, 3}, func(id int32) bool { return id == leader })
	c.voters([]int32{1, 2, 3}, rest...)
	c.propose("after-crash", rest...)
	want = append(want, "after-crash")
	c.sameData(want, rest...)

	c.start(4, nil)
	testutil.Eventually(t, 20*time.Second, func() bool {
		return c.add(c.leader(rest...), c.member(4), 5*time.Second) == nil
	}, "AddVoter 4 retried on the new leader")
	c.start(leader, nil)
	c.voters([]int32{1, 2, 3, 4}, 1, 2, 3, 4)
	c.propose("end", 1, 2, 3, 4)
	want = append(want, "end")
	c.sameData(want, 1, 2, 3, 4)
}

// TestJoiningControllerCrashRollsBack: the joining controller dies while
// it catches up: the change times out and is rolled back (it is no
// learner any more), the quorum keeps committing, and after a restart it
// is added.
func TestJoiningControllerCrashRollsBack(t *testing.T) {
	c := newDynCluster(t)
	c.format(1)
	c.format(2)
	c.start(1, []Member{c.member(1)})
	var want []string
	for i := range 200 {
		want = append(want, fmt.Sprintf("e-%03d", i))
		c.propose(want[i], 1)
	}
	c.start(2, nil)
	c.net.Cut(RaftID(1), RaftID(2)) // slow enough to crash it mid-way
	errc := make(chan error, 1)
	go func() { errc <- c.add(1, c.member(2), time.Second) }()
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, ok := c.drivers[1].Membership().Find(2)
		return ok
	}, "node 2 a learner")
	c.crash(2)
	if err := <-errc; !errors.Is(err, ErrChangeTimedOut) {
		t.Fatalf("AddVoter of a crashed controller: %v, want ErrChangeTimedOut", err)
	}
	testutil.Eventually(t, 5*time.Second, func() bool {
		_, ok := c.drivers[1].Membership().Find(2)
		return !ok
	}, "the learner removed again")
	c.propose("after", 1)
	want = append(want, "after")
	c.net.Heal()
	c.start(2, nil)
	if err := c.add(1, c.member(2), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	c.voters([]int32{1, 2}, 1, 2)
	c.sameData(want, 1, 2)
}
