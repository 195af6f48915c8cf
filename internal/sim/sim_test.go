package sim

import (
	"flag"
	"fmt"
	"testing"
	"testing/cryptotest"
)

var (
	seedFlag   = flag.Uint64("seed", 0, "run only this seed (replay of a failure)")
	votersFlag = flag.Int("voters", 0, "with -seed: the number of voters of the failed run")
	longFlag   = flag.Bool("long", false, "run many seeds")
)

// runSeed runs one seed; Raft's election jitter reads crypto/rand, fixed
// here by the seed so the run replays exactly.
func runSeed(t *testing.T, cfg Config) Stats {
	t.Helper()
	cryptotest.SetGlobalRandom(t, cfg.Seed)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := s.Run()
	if err != nil {
		t.Fatalf("seed %d with %d voters: %v\nreplay: go test ./internal/sim -run TestSim -seed %d -voters %d", cfg.Seed, cfg.Voters, err, cfg.Seed, cfg.Voters)
	}
	return stats
}

func TestSim(t *testing.T) {
	type run struct {
		voters int
		seeds  uint64
		steps  int
	}
	runs := []run{{3, 5, 1000}, {5, 2, 1000}}
	if *longFlag {
		runs = []run{{3, 200, 3000}, {5, 100, 3000}}
	}
	if *seedFlag != 0 {
		voters := *votersFlag
		if voters == 0 {
			voters = 3
		}
		steps := 1000
		if *longFlag {
			steps = 3000
		}
		runs = []run{{voters, 1, steps}}
	}
	snapshots := 0
	for _, r := range runs {
		for i := range r.seeds {
			seed := 1 + i
			if *seedFlag != 0 {
				seed = *seedFlag
			}
			t.Run(fmt.Sprintf("voters=%d/seed=%d", r.voters, seed), func(t *testing.T) {
				st := runSeed(t, Config{Seed: seed, Voters: r.voters, Steps: r.steps})
				t.Logf("%+v", st)
				if st.AckedOps == 0 || st.Leaders == 0 {
					t.Fatalf("seed %d did nothing: %+v", seed, st)
				}
				snapshots += st.SnapshotsSent
			})
		}
	}
	if *seedFlag == 0 && snapshots == 0 {
		t.Fatal("no run sent a snapshot to a lagging voter: the snapshot path went untested")
	}
}

// TestSimIsDeterministic runs one seed twice: the same events must happen.
func TestSimIsDeterministic(t *testing.T) {
	a := runSeed(t, Config{Seed: 42, Steps: 400})
	b := runSeed(t, Config{Seed: 42, Steps: 400})
	if a != b {
		t.Fatalf("same seed, different runs:\n%+v\n%+v", a, b)
	}
}
