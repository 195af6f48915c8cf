package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		floor, live uint64
		want        int
	}{
		{64 * mib, 0, 1600},        // the runtime's minimum heap alone reaches 64 MiB
		{64 * mib, 1, 1600},        // ...
		{64 * mib, 4 * mib, 1500},  // 4 MiB × 16 = 64 MiB
		{64 * mib, 6 * mib, 967},   // rounded up: the goal reaches the floor
		{64 * mib, 31 * mib, 107},  // just under half the floor
		{64 * mib, 32 * mib, 100},  // half the floor: the default reaches it
		{64 * mib, 500 * mib, 100}, // a large live heap keeps the default
		{2 * mib, 0, 100},          // a floor under the runtime's minimum changes nothing
	} {
		if got := Percent(c.floor, c.live); got != c.want {
			t.Errorf("Percent(%d, %d) = %d, want %d", c.floor, c.live, got, c.want)
		}
	}
	// For every live heap the goal is at least the floor and, while the
	// floor sets it, within a percent of it.
	const floor = 64 * mib
	for live := uint64(0); live < 3*floor; live += 97 * 1024 {
		p := Percent(floor, live)
		g := goal(live, p)
		if g < floor {
			t.Fatalf("live %d: GOGC %d, goal %d under the floor", live, p, g)
		}
		if p > defaultPercent && g > floor+floor/100 {
			t.Fatalf("live %d: GOGC %d, goal %d well above the floor", live, p, g)
		}
	}
}

func readGoal(t *testing.T) (goal, live uint64, percent int) {
	t.Helper()
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}, {Name: liveMetric}, {Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64(), s[1].Value.Uint64(), int(s[2].Value.Uint64())
}

// TestStartKeepsGoalAtFloor runs the tuner in this (small-heap) test
// process: after collections the heap goal is at least the floor, and stop
// brings GOGC back to its default.
func TestStartKeepsGoalAtFloor(t *testing.T) {
	t.Setenv("GOGC", "") // set for the test's duration, then unset below
	unsetGOGC(t)
	const floor = 256 << 20
	stop, running := Start(floor)
	if !running {
		t.Fatal("Start did not run without GOGC in the environment")
	}
	defer stop()
	// Cleanups run after the collection, on their own goroutine.
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		goal, live, percent := readGoal(t)
		if goal >= floor && percent > defaultPercent {
			if goal > floor+floor/100 {
				t.Fatalf("heap goal %d B well above the floor %d B (live %d B, GOGC %d)", goal, floor, live, percent)
			}
			t.Logf("live %d B, GOGC %d, goal %d B", live, percent, goal)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("heap goal %d B under the floor %d B (live %d B, GOGC %d)", goal, floor, live, percent)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	runtime.GC()
	if _, _, percent := readGoal(t); percent != defaultPercent {
		t.Fatalf("GOGC %d after stop, want %d", percent, defaultPercent)
	}
}

func TestStartLeavesOperatorsGOGC(t *testing.T) {
	t.Setenv("GOGC", "200")
	old := debug.SetGCPercent(200)
	defer debug.SetGCPercent(old)
	stop, running := Start(DefaultFloor)
	defer stop()
	if running {
		t.Fatal("Start ran with GOGC set in the environment")
	}
	runtime.GC()
	if _, _, percent := readGoal(t); percent != 200 {
		t.Fatalf("GOGC %d, want the operator's 200", percent)
	}
}
