package commitlog

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

var moveTP = kafka.TopicPartition{Topic: "mv", Partition: 0}

// logBytes reads every batch of l: offsets and contents together.
func logBytes(t *testing.T, l *Log) []byte {
	t.Helper()
	var out []byte
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		r, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatalf("read %d: %v", off, err)
		}
		b, err := r.Bytes()
		if err != nil || len(b) == 0 {
			t.Fatalf("read %d: %d bytes, %v", off, len(b), err)
		}
		out = append(out, b...)
		off = r.EndOffset
	}
	return out
}

func appendN(t *testing.T, l *Log, n int) {
	t.Helper()
	for range n {
		if _, err := l.Append(makeBatch(batchSpec{records: 3, valueSize: 200}), 0); err != nil {
			t.Fatal(err)
		}
	}
}

// moveUntilDone steps the move of moveTP, appending a batch before each
// step as a producer would, until the log is in dir.
func moveUntilDone(t *testing.T, m *Manager, l *Log, dir string) {
	t.Helper()
	for i := 0; ; i++ {
		if d, _ := m.DirOf(moveTP); d == dir {
			return
		}
		if i > 10000 {
			t.Fatal("the move did not finish")
		}
		if i%3 == 0 {
			appendN(t, l, 1)
		}
		if _, err := m.StepFuture(moveTP); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMoveBetweenLogDirsUnderAppends(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a", "/data/b")
	l, err := m.GetOrCreate(moveTP, kafka.UUID{7}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 40)
	if err := m.AlterLogDir(moveTP, "/data/a"); err != nil {
		t.Fatalf("a move to the dir the log is in: %v", err)
	}
	if len(m.FutureLogs()) != 0 {
		t.Fatal("a move to the log's own dir made a future log")
	}
	if err := m.AlterLogDir(moveTP, "/data/c"); !errors.Is(err, ErrLogDirNotFound) {
		t.Fatalf("a move to an unknown dir: %v", err)
	}
	if err := m.AlterLogDir(kafka.TopicPartition{Topic: "other", Partition: 0}, "/data/b"); !errors.Is(err, ErrNoReplica) {
		t.Fatalf("a move of a partition not hosted: %v", err)
	}
	if err := m.AlterLogDir(moveTP, "/data/b"); err != nil {
		t.Fatal(err)
	}
	fl := m.FutureLogs()
	if len(fl) != 1 || fl[0].Dir != "/data/b" || fl[0].Lag != l.LogEndOffset() {
		t.Fatalf("future logs %+v, log end offset %d", fl, l.LogEndOffset())
	}
	moveUntilDone(t, m, l, "/data/b")
	checkDirCounts(t, m)
	if !strings.HasPrefix(l.Dir(), "/data/b/") || len(m.FutureLogs()) != 0 {
		t.Fatalf("after the move the log is at %s, futures %+v", l.Dir(), m.FutureLogs())
	}
	before := logBytes(t, l)
	appendN(t, l, 5) // the same *Log serves appends from its new place
	want := logBytes(t, l)
	if !bytes.HasPrefix(want, before) {
		t.Fatal("records changed across the swap")
	}
	names, _ := fsys.List("/data/a")
	if !containsSuffix(names, "-delete") {
		t.Fatalf("the old log was not renamed for deletion: %v", names)
	}
	clk.Advance(2 * time.Second)
	if err := m.RemoveDeletedSegments(clk.Now()); err != nil {
		t.Fatal(err)
	}
	if names, _ := fsys.List("/data/a"); containsSuffix(names, "-delete") {
		t.Fatalf("the old log was not removed after file.delete.delay.ms: %v", names)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, fsys, clk, "/data/a", "/data/b")
	defer m.Close()
	l2, ok := m.Get(moveTP)
	if d, _ := m.DirOf(moveTP); !ok || d != "/data/b" {
		t.Fatalf("after restart the log is in %q", d)
	}
	if !bytes.Equal(logBytes(t, l2), want) {
		t.Fatal("records changed across the restart")
	}
}

func containsSuffix(names []string, suffix string) bool {
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			return true
		}
	}
	return false
}

// TestMoveCrashAtEveryRename kills the move at each of the swap's renames
// (and after them) with a power loss: the restarted manager has one
// complete log holding every flushed record, and the move completes.
func TestMoveCrashAtEveryRename(t *testing.T) {
	for crashAt := 1; crashAt <= 3; crashAt++ {
		mem := newDurableMem(t)
		var renames atomic.Int32
		efs := vfs.NewErrorFS(mem, vfs.InjectorFunc(func(op vfs.Op, path string, _ int) error {
			base := filepath.Base(path)
			if op != vfs.OpRename || base != "mv-0" && !strings.HasSuffix(base, "-future") && !strings.HasSuffix(base, "-delete") {
				return nil
			}
			// Each rename checks its old and its new name: count pairs.
			if n := renames.Add(1); int(n+1)/2 == crashAt && crashAt < 3 {
				return errors.New("injected crash")
			}
			return nil
		}))
		clk := clock.NewManual(testStart)
		m := newTestManager(t, efs, clk, "/data/a", "/data/b")
		l, err := m.GetOrCreate(moveTP, kafka.UUID{7}, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 30)
		if err := l.Flush(); err != nil { // what a crash may not lose
			t.Fatal(err)
		}
		want := l.LogEndOffset()
		if err := m.AlterLogDir(moveTP, "/data/b"); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 1000; i++ {
			if _, err := m.StepFuture(moveTP); err != nil || len(m.FutureLogs()) == 0 {
				break
			}
		}
		mem.Crash()
		m2 := newTestManager(t, mem, clk, "/data/a", "/data/b")
		l2, ok := m2.Get(moveTP)
		if !ok || l2.LogEndOffset() != want {
			t.Fatalf("crash at rename %d: log found %v, end offset %d want %d", crashAt, ok, l2.LogEndOffset(), want)
		}
		for i := 0; i < 1000; i++ {
			if d, _ := m2.DirOf(moveTP); d == "/data/b" {
				break
			}
			if _, err := m2.StepFuture(moveTP); err != nil {
				t.Fatal(err)
			}
		}
		if d, _ := m2.DirOf(moveTP); d != "/data/b" {
			t.Fatalf("crash at rename %d: the move did not complete after restart: log in %s", crashAt, d)
		}
		if l2.LogEndOffset() != want {
			t.Fatalf("crash at rename %d: end offset %d, want %d", crashAt, l2.LogEndOffset(), want)
		}
		m2.Close()
	}
}

// TestMoveDestinationFails: the destination dir fails during a move. The
// move ends (Kafka's removeFutureLocalReplica), the current log serves on
// from its healthy dir, and the handler hears of the dir with one still
// online.
func TestMoveDestinationFails(t *testing.T) {
	efs := vfs.NewErrorFS(newDurableMem(t), nil)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, efs, clk, "/data/a", "/data/b")
	defer m.Close()
	var heard []string
	m.SetDirOfflineHandler(func(dir string, online int) { heard = append(heard, fmt.Sprintf("%s %d", dir, online)) })
	l, err := m.GetOrCreate(moveTP, kafka.UUID{7}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 30)
	if err := m.AlterLogDir(moveTP, "/data/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.StepFuture(moveTP); err != nil {
		t.Fatal(err)
	}
	efs.SetInjector(vfs.FailPaths(vfs.UnderDir("/data/b"), syscall.EIO))
	for i := 0; i < 100 && len(m.FutureLogs()) > 0; i++ {
		m.StepFuture(moveTP)
	}
	if len(m.FutureLogs()) != 0 || len(heard) != 1 || heard[0] != "/data/b 1" {
		t.Fatalf("futures %v, handler heard %v", m.FutureLogs(), heard)
	}
	appendN(t, l, 1)
	if d, _ := m.DirOf(moveTP); d != "/data/a" || l.Offline() {
		t.Fatalf("log in %s, offline %v", d, l.Offline())
	}
	if err := m.AlterLogDir(moveTP, "/data/b"); !errors.Is(err, ErrOffline) {
		t.Fatalf("a move to an offline dir: %v", err)
	}
}

// TestDeleteDuringMove: deleting a partition while it moves removes both
// logs and takes no dir offline.
func TestDeleteDuringMove(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a", "/data/b")
	defer m.Close()
	m.Start(t.Context())
	l, err := m.GetOrCreate(moveTP, kafka.UUID{7}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 200)
	if err := m.AlterLogDir(moveTP, "/data/b"); err != nil {
		t.Fatal(err)
	}
	if err := m.Delete(moveTP); err != nil {
		t.Fatal(err)
	}
	if len(m.FutureLogs()) != 0 || len(m.OfflineDirs()) != 0 {
		t.Fatalf("futures %v, offline dirs %v", m.FutureLogs(), m.OfflineDirs())
	}
	checkDirCounts(t, m)
	clk.Advance(2 * time.Second)
	if err := m.RemoveDeletedSegments(clk.Now()); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"/data/a", "/data/b"} {
		if names, _ := fsys.List(d); containsSuffix(names, "-future") || containsSuffix(names, "-delete") || containsSuffix(names, "mv-0") {
			t.Fatalf("%s still has %v", d, names)
		}
	}
}

// TestMoveConcurrent runs the Manager's mover goroutine while one goroutine
// appends and another reads (for the race detector): the move ends with
// every appended batch in place.
func TestMoveConcurrent(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a", "/data/b")
	defer m.Close()
	m.Start(t.Context())
	l, err := m.GetOrCreate(moveTP, kafka.UUID{7}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 100)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; i < 300; i++ {
			if _, err := l.Append(makeBatch(batchSpec{records: 3, valueSize: 200}), 0); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := l.Read(l.LogStartOffset(), 4096, l.LogEndOffset(), true); err != nil {
				t.Error(err)
				return
			}
			_ = l.Size()
			_ = l.Dir()
		}
	}()
	if err := m.AlterLogDir(moveTP, "/data/b"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if d, _ := m.DirOf(moveTP); d == "/data/b" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the move did not finish")
		}
		m.wakeMover()
		time.Sleep(time.Millisecond)
	}
	close(done)
	wg.Wait()
	// The appender may have run past the swap: its batches are all in the
	// moved log either way.
	if got := l.LogEndOffset(); got != 400*3 {
		t.Fatalf("log end offset %d, want %d", got, 400*3)
	}
	if len(logBytes(t, l)) == 0 {
		t.Fatal("nothing read after the move")
	}
}
