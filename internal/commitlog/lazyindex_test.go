package commitlog

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// openFiles wraps an FS and tracks the files open through it, as the
// process's file descriptors would be.
type openFiles struct {
	vfs.FS
	mu   sync.Mutex
	open map[*countedFile]string
}

type countedFile struct {
	vfs.File
	fs *openFiles
}

func (c *countedFile) Close() error {
	c.fs.mu.Lock()
	delete(c.fs.open, c)
	c.fs.mu.Unlock()
	return c.File.Close()
}

func (o *openFiles) track(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	c := &countedFile{File: f, fs: o}
	o.mu.Lock()
	o.open[c] = name
	o.mu.Unlock()
	return c, nil
}

func (o *openFiles) Create(name string) (vfs.File, error) {
	f, err := o.FS.Create(name)
	return o.track(name, f, err)
}

func (o *openFiles) OpenReadWrite(name string) (vfs.File, error) {
	f, err := o.FS.OpenReadWrite(name)
	return o.track(name, f, err)
}

func (o *openFiles) Open(name string) (vfs.File, error) {
	f, err := o.FS.Open(name)
	return o.track(name, f, err)
}

func (o *openFiles) names() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, n := range o.open {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// TestIdlePartitionsHoldOnlyLogFiles creates partitions, writes across
// several segments of one and reads its sealed segments (index lookups),
// flushes, then restarts: at every point the only files held open are the
// segments' .log files, one per segment, as Kafka holds (its indexes are
// mapped on first use and their handles closed at once).
func TestIdlePartitionsHoldOnlyLogFiles(t *testing.T) {
	fsys := &openFiles{FS: newDurableMem(t), open: map[*countedFile]string{}}
	clk := clock.NewManual(testStart)
	check := func(m *Manager, when string) {
		t.Helper()
		segments := 0
		for _, l := range m.Logs() {
			segments += len(l.Segments())
		}
		names := fsys.names()
		for _, n := range names {
			if !strings.HasSuffix(n, logSuffix) {
				t.Fatalf("%s: %s is held open; only .log files should be:\n%s", when, n, strings.Join(names, "\n"))
			}
		}
		if len(names) != segments {
			t.Fatalf("%s: %d files open for %d segments:\n%s", when, len(names), segments, strings.Join(names, "\n"))
		}
	}
	m := newTestManager(t, fsys, clk, "/data/a")
	for p := range int32(20) {
		if _, err := m.GetOrCreate(kafka.TopicPartition{Topic: "idle", Partition: p}, kafka.UUID{7}, testOptions()); err != nil {
			t.Fatal(err)
		}
	}
	check(m, "after creating 20 partitions")
	l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "busy", Partition: 0}, kafka.UUID{8}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	appendUntilSegments(t, l, 4)
	if got := len(readAll(t, l)); got == 0 {
		t.Fatal("nothing read")
	}
	if _, _, err := l.OffsetForTimestamp(testStart.UnixMilli() + 3); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	check(m, "after appends, reads and a flush")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if names := fsys.names(); len(names) != 0 {
		t.Fatalf("files open after close:\n%s", strings.Join(names, "\n"))
	}
	m = newTestManager(t, fsys, clk, "/data/a")
	defer m.Close()
	check(m, "after a restart")
	l, _ = m.Get(kafka.TopicPartition{Topic: "busy", Partition: 0})
	if got := len(readAll(t, l)); got == 0 {
		t.Fatal("nothing read after the restart")
	}
	check(m, "after reads following the restart")
}

// appendUntilSegments appends 3-record batches until the log has n segments.
func appendUntilSegments(t *testing.T, l *Log, n int) {
	t.Helper()
	for i := 0; len(l.Segments()) < n; i++ {
		if _, err := l.Append(makeBatch(batchSpec{records: 3, valueSize: 60, timestamp: testStart.UnixMilli() + int64(i)}), 0); err != nil {
			t.Fatal(err)
		}
	}
}
