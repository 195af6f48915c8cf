package nemesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// fakeCluster records what the nemesis does to it and fails the test the
// moment more than a minority of its nodes is impaired, or a node is cut
// off from a majority.
type fakeCluster struct {
	t     *testing.T
	nodes []int32

	mu       sync.Mutex
	down     map[int32]bool
	paused   map[int32]bool
	isolated map[int32]bool
	clock    map[int32]time.Duration
	links    map[[2]int32]bool
	events   []string
	// faulted is closed at the first fault.
	faulted chan struct{}
	once    sync.Once
}

func newFake(t *testing.T, n int) *fakeCluster {
	f := &fakeCluster{t: t, down: map[int32]bool{}, paused: map[int32]bool{}, isolated: map[int32]bool{},
		clock: map[int32]time.Duration{}, links: map[[2]int32]bool{}, faulted: make(chan struct{})}
	for i := range n {
		f.nodes = append(f.nodes, int32(i+1))
	}
	return f
}

func (f *fakeCluster) BootstrapServers() []string { return []string{"127.0.0.1:1"} }
func (f *fakeCluster) Nodes() []int32             { return f.nodes }
func (f *fakeCluster) ClockFaults() bool          { return true }

// do applies a change under the lock and checks the bound after it.
func (f *fakeCluster) do(event string, change func() error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := change(); err != nil {
		return err
	}
	f.events = append(f.events, event)
	f.once.Do(func() { close(f.faulted) })
	f.checkLocked()
	return nil
}

func (f *fakeCluster) checkLocked() {
	minority := (len(f.nodes) - 1) / 2
	impaired := 0
	for _, id := range f.nodes {
		if f.down[id] || f.paused[id] || f.isolated[id] || f.clock[id] != 0 {
			impaired++
		}
		sees := 1
		for _, o := range f.nodes {
			if o != id && !f.links[link(id, o)] {
				sees++
			}
		}
		if sees <= len(f.nodes)/2 {
			f.t.Errorf("node %d sees %d of %d nodes: %v", id, sees, len(f.nodes), f.events)
		}
	}
	if impaired > minority {
		f.t.Errorf("%d nodes impaired at once (minority %d): %v", impaired, minority, f.events)
	}
}

func (f *fakeCluster) healed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range f.nodes {
		if f.down[id] || f.paused[id] || f.isolated[id] || f.clock[id] != 0 {
			return fmt.Errorf("node %d not healed: down %v paused %v isolated %v clock %v", id, f.down[id], f.paused[id], f.isolated[id], f.clock[id])
		}
	}
	if len(f.links) > 0 {
		return fmt.Errorf("links still cut: %v", f.links)
	}
	return nil
}

func (f *fakeCluster) stop(verb string, id int32) error {
	return f.do(fmt.Sprintf("%s %d", verb, id), func() error {
		if f.down[id] {
			return fmt.Errorf("node %d already down", id)
		}
		f.down[id] = true
		return nil
	})
}

func (f *fakeCluster) Kill(id int32) error      { return f.stop("kill", id) }
func (f *fakeCluster) Terminate(id int32) error { return f.stop("terminate", id) }
func (f *fakeCluster) Restart(id int32) error {
	return f.do(fmt.Sprintf("restart %d", id), func() error {
		if !f.down[id] {
			return fmt.Errorf("node %d is running", id)
		}
		delete(f.down, id)
		return nil
	})
}
func (f *fakeCluster) Pause(id int32) error {
	return f.do(fmt.Sprintf("pause %d", id), func() error { f.paused[id] = true; return nil })
}
func (f *fakeCluster) Resume(id int32) error {
	return f.do(fmt.Sprintf("resume %d", id), func() error { delete(f.paused, id); return nil })
}
func (f *fakeCluster) Isolate(id int32) error {
	return f.do(fmt.Sprintf("isolate %d", id), func() error { f.isolated[id] = true; return nil })
}
func (f *fakeCluster) CutLink(a, b int32) error {
	return f.do(fmt.Sprintf("cut %d %d", a, b), func() error { f.links[link(a, b)] = true; return nil })
}
func (f *fakeCluster) HealLink(a, b int32) error {
	return f.do(fmt.Sprintf("heal %d %d", a, b), func() error { delete(f.links, link(a, b)); return nil })
}
func (f *fakeCluster) HealAll() error {
	return f.do("heal all", func() error { clear(f.isolated); clear(f.links); return nil })
}
func (f *fakeCluster) JumpClock(id int32, d time.Duration) error {
	return f.do(fmt.Sprintf("clock %d %v", id, d), func() error {
		if d == 0 {
			delete(f.clock, id)
		} else {
			f.clock[id] = d
		}
		return nil
	})
}

var processKinds = []Kind{Kill, Pause, Partition, PartialPartition, Terminate, ClockJump}

// runFake runs a nemesis of count faults on a fake of n nodes.
func runFake(t *testing.T, n int, seed int64, count int) (*fakeCluster, []history.Op, *Nemesis) {
	t.Helper()
	f := newFake(t, n)
	rec := history.NewRecorder(time.Now, nil)
	nem := New(f, "t", Schedule{Seed: seed, Interval: time.Microsecond, Hold: time.Microsecond, Count: count, Kinds: processKinds}, rec, nil)
	if err := nem.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.healed(); err != nil {
		t.Fatal(err)
	}
	return f, rec.Ops(), nem
}

// faults are a history's fault ops without their times.
func faults(ops []history.Op) []string {
	var out []string
	for _, op := range ops {
		out = append(out, fmt.Sprintf("%s %s %v %s %s", op.Kind, op.Fault, op.Nodes, op.Detail, op.Err))
	}
	return out
}

func TestSameSeedSameFaults(t *testing.T) {
	f1, ops1, _ := runFake(t, 5, 42, 60)
	f2, ops2, _ := runFake(t, 5, 42, 60)
	if !slices.Equal(faults(ops1), faults(ops2)) || !slices.Equal(f1.events, f2.events) {
		t.Fatalf("seed 42 gave two schedules:\n%v\n%v", faults(ops1), faults(ops2))
	}
	_, ops3, _ := runFake(t, 5, 43, 60)
	if slices.Equal(faults(ops1), faults(ops3)) {
		t.Fatal("seeds 42 and 43 gave the same schedule")
	}
}

func TestFaultsArePairedCountedAndWithinAMinority(t *testing.T) {
	for _, n := range []int{3, 4, 5, 7} {
		t.Run(fmt.Sprint(n, " nodes"), func(t *testing.T) {
			_, ops, nem := runFake(t, n, int64(n), 120)
			counted := map[Kind]int{}
			for i := 0; i < len(ops); i += 2 {
				start, end := ops[i], ops[i+1]
				if start.Kind != history.FaultStart || end.Kind != history.FaultEnd || start.Fault != end.Fault ||
					!slices.Equal(start.Nodes, end.Nodes) || start.Process != "nemesis" || end.Err != "" {
					t.Fatalf("ops %d and %d are not a fault's start and end: %s / %s", i, i+1, start, end)
				}
				if len(start.Nodes) == 0 || start.Detail == "" {
					t.Errorf("fault without nodes or detail: %s", start)
				}
				counted[Kind(start.Fault)]++
			}
			if len(ops) != 240 {
				t.Fatalf("%d ops for 120 faults", len(ops))
			}
			got := nem.Counts()
			for _, k := range processKinds {
				if got[k] == 0 || got[k] != counted[k] {
					t.Errorf("%s: counted %d, history has %d", k, got[k], counted[k])
				}
			}
		})
	}
}

func TestCancelHealsTheActiveFault(t *testing.T) {
	for _, k := range processKinds {
		t.Run(string(k), func(t *testing.T) {
			f := newFake(t, 3)
			rec := history.NewRecorder(time.Now, nil)
			nem := New(f, "t", Schedule{Seed: 1, Interval: time.Millisecond, Hold: time.Hour, Kinds: []Kind{k}}, rec, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- nem.Run(ctx) }()
			<-f.faulted
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
			if err := f.healed(); err != nil {
				t.Fatal(err)
			}
			ops := rec.Ops()
			if len(ops) != 2 || ops[0].Kind != history.FaultStart || ops[1].Kind != history.FaultEnd {
				t.Fatalf("history %v", faults(ops))
			}
		})
	}
}

func TestRingCutsLeaveEachNodeADifferentMajority(t *testing.T) {
	for n := 3; n <= 9; n++ {
		ring := make([]int32, n)
		for i, j := range rand.New(rand.NewPCG(uint64(n), 0)).Perm(n) {
			ring[i] = int32(j + 1)
		}
		cut := map[[2]int32]bool{}
		for _, l := range ringCuts(ring) {
			cut[l] = true
		}
		if len(cut) == 0 {
			t.Fatalf("%d nodes: nothing cut", n)
		}
		seen := map[string]int32{}
		for _, a := range ring {
			var sees []int32
			for _, b := range ring {
				if a == b || !cut[link(a, b)] {
					sees = append(sees, b)
				}
			}
			slices.Sort(sees)
			if len(sees) <= n/2 {
				t.Errorf("%d nodes: node %d sees %v, no majority", n, a, sees)
			}
			if len(sees) < n {
				if o, dup := seen[fmt.Sprint(sees)]; dup {
					t.Errorf("%d nodes: nodes %d and %d see the same %v", n, a, o, sees)
				}
				seen[fmt.Sprint(sees)] = a
			}
		}
	}
}

func TestSupported(t *testing.T) {
	if got := Supported(External([]string{"x:9092"})); !slices.Equal(got, []Kind{LeaderElection, Reassign}) {
		t.Errorf("external: %v", got)
	}
	if got := Supported(newFake(t, 3)); !slices.Equal(got, []Kind{Kill, Pause, Partition, PartialPartition, Terminate, LeaderElection, Reassign, ClockJump}) {
		t.Errorf("3-node cluster with clock faults: %v", got)
	}
	if got := Supported(newFake(t, 1)); !slices.Equal(got, []Kind{LeaderElection, Reassign}) {
		t.Errorf("1-node cluster: %v", got)
	}
	nem := New(External([]string{"x:9092"}), "t", Schedule{Kinds: []Kind{Kill}}, history.NewRecorder(time.Now, nil), nil)
	if err := nem.Run(context.Background()); err == nil {
		t.Error("kill faults accepted on an external cluster")
	}
}
