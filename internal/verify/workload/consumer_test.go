package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
)

// A killed member vanishes without leaving: the survivor gets its
// partitions only once the coordinator has timed the session out, and the
// killed member records nothing after the kill. A clean leave hands them
// over at once.
func TestKilledMemberIsTimedOutLeaverIsNot(t *testing.T) {
	c := startCluster(t, 1)
	cfg := testConfig(c, t, "kill")
	cfg.SessionTimeout = 3 * time.Second
	runFor(t, 20*time.Second, func(ctx context.Context) error { return CreateTopic(ctx, cfg) })
	rec := history.NewRecorder(time.Now, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var runs sync.WaitGroup
	defer runs.Wait()
	defer cancel()
	join := func(name string) *Consumer {
		m, err := NewConsumer(cfg, name, rec, false)
		if err != nil {
			t.Fatal(err)
		}
		runs.Go(func() { m.Run(ctx) })
		return m
	}
	survivor, victim := join("consumer-1"), join("consumer-2")
	defer survivor.Leave(5 * time.Second)
	awaitOwned(t, rec, "consumer-2", 1, 15*time.Second)

	killed := time.Now()
	victim.Kill()
	afterKill := len(rec.Ops())
	awaitOwned(t, rec, "consumer-1", int(cfg.Partitions), 15*time.Second)
	took := time.Since(killed)
	t.Logf("partitions handed over %s after a kill (session timeout %s)", took, cfg.SessionTimeout)
	if took < cfg.SessionTimeout/2 {
		t.Errorf("survivor owned every partition %s after the kill, before the %s session could expire", took, cfg.SessionTimeout)
	}
	for _, op := range rec.Ops()[afterKill:] {
		if op.Process == "consumer-2" {
			t.Errorf("killed member recorded %s", op)
		}
	}

	leaver := join("consumer-3")
	awaitOwned(t, rec, "consumer-3", 1, 15*time.Second)
	left := time.Now()
	leaver.Leave(5 * time.Second)
	awaitOwned(t, rec, "consumer-1", int(cfg.Partitions), 15*time.Second)
	took = time.Since(left)
	t.Logf("partitions handed over %s after a clean leave", took)
	if took >= cfg.SessionTimeout {
		t.Errorf("survivor owned every partition %s after a clean leave, as slow as a session timeout", took)
	}
}

// awaitOwned waits until process's last Assign op lists at least n
// partitions.
func awaitOwned(t *testing.T, rec *history.Recorder, process string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ops := rec.Ops()
		for j := len(ops) - 1; j >= 0; j-- {
			if ops[j].Kind == history.Assign && ops[j].Process == process {
				if len(ops[j].Partitions) >= n {
					return
				}
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not own %d partitions within %s", process, n, timeout)
}
