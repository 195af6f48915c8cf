package commitlog

import (
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

// checkDirCounts recounts the logs and futures in each dir and compares
// with the counts the Manager keeps.
func checkDirCounts(t *testing.T, m *Manager) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[string]int{}
	for _, d := range m.mu.dirOf {
		want[d]++
	}
	for _, f := range m.mu.futures {
		want[f.dir]++
	}
	for d, n := range m.mu.perDir {
		if n != want[d] {
			t.Fatalf("dir %s: kept count %d, %d logs and futures there (all kept %v)", d, n, want[d], m.mu.perDir)
		}
	}
	for d, n := range want {
		if m.mu.perDir[d] != n {
			t.Fatalf("dir %s: %d logs and futures there, kept count %d", d, n, m.mu.perDir[d])
		}
	}
}

// dirCount is the kept count of dir.
func dirCount(m *Manager, dir string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.perDir[dir]
}

// TestNewLogsGoToTheEmptiestDir places logs on three dirs, moves and
// deletes some and restarts: each new log goes to the dir holding the
// fewest logs and futures, and the kept counts always match a recount.
func TestNewLogsGoToTheEmptiestDir(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	dirs := []string{"/data/a", "/data/b", "/data/c"}
	m := newTestManager(t, fsys, clk, dirs...)
	tp := func(i int) kafka.TopicPartition { return kafka.TopicPartition{Topic: "spread", Partition: int32(i)} }
	create := func(i int) {
		t.Helper()
		if _, err := m.GetOrCreate(tp(i), kafka.UUID{9}, testOptions()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		create(i)
	}
	checkDirCounts(t, m)
	for _, d := range dirs {
		if n := dirCount(m, d); n != 10 {
			t.Fatalf("%s holds %d of 30 logs, want 10", d, n)
		}
	}
	// A move counts in its destination from its start.
	from, _ := m.DirOf(tp(0))
	to := dirs[0]
	if from == to {
		to = dirs[1]
	}
	if err := m.AlterLogDir(tp(0), to); err != nil {
		t.Fatal(err)
	}
	checkDirCounts(t, m)
	for {
		if d, _ := m.DirOf(tp(0)); d == to {
			break
		}
		if _, err := m.StepFuture(tp(0)); err != nil {
			t.Fatal(err)
		}
	}
	checkDirCounts(t, m)
	// Emptying one dir by deletes sends the next logs there.
	for i := range 30 {
		if d, _ := m.DirOf(tp(i)); d == "/data/c" {
			if err := m.Delete(tp(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	checkDirCounts(t, m)
	for i := 30; i < 33; i++ {
		create(i)
		if d, _ := m.DirOf(tp(i)); d != "/data/c" {
			t.Fatalf("log %d went to %s with /data/c the emptiest", i, d)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, fsys, clk, dirs...)
	defer m.Close()
	checkDirCounts(t, m)
	if n := dirCount(m, "/data/c"); n != 3 {
		t.Fatalf("after the restart /data/c counts %d logs, want 3", n)
	}
}
