package commitlog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/testutil"
	"github.com/sluice-io/sluice/internal/vfs"
)

// readCounter counts the reads of .log files (ErrorFS reports no sizes for reads).
type readCounter struct {
	mu    sync.Mutex
	reads map[string]int
}

func (c *readCounter) MaybeError(op vfs.Op, path string, n int) error {
	if op == vfs.OpRead && strings.HasSuffix(path, logSuffix) {
		c.mu.Lock()
		c.reads[path[strings.LastIndexByte(path, '/')+1:]]++
		c.mu.Unlock()
	}
	return nil
}

func (c *readCounter) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, b := range c.reads {
		n += b
	}
	return n
}

// TestStartupReadsOnlyWhatItMust checks that a clean start reads no more
// than the index tails of the segments, and an unclean one re-reads only
// the segments at or above the recovery point.
func TestStartupReadsOnlyWhatItMust(t *testing.T) {
	counter := &readCounter{reads: map[string]int{}}
	efs := vfs.NewErrorFS(newDurableMem(t), nil)
	clk := clock.NewManual(testStart)
	open := func(st StartState) *Log {
		l, err := Open(efs, "/data/t-0", testTP, testOptions(), clk, st, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l := open(StartState{})
	for i := 0; i < 200; i++ {
		if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0); err != nil {
			t.Fatal(err)
		}
	}
	size := l.Size()
	segs := len(l.Segments())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	efs.SetInjector(counter)
	l = open(StartState{CleanShutdown: true})
	// Each segment: at most the headers after its last index entry (the
	// index interval is 256 bytes, batches ~250) plus its first header.
	if got, limit := counter.total(), segs*3; got > limit {
		t.Fatalf("clean start made %d reads of a %d-byte log (%d segments); limit %d", got, size, segs, limit)
	}
	last := l.Segments()[segs-1]
	rp := l.Segments()[segs-2].BaseOffset
	l.Close()
	counter.reads = map[string]int{}
	l = open(StartState{RecoveryPoint: rp})
	defer l.Close()
	for name, n := range counter.reads {
		if name < segmentFileName(rp, logSuffix) && n > 3 {
			t.Errorf("unclean start made %d reads of %s below the recovery point %d", n, name, rp)
		}
	}
	// Recovery reads each batch's header and then the whole batch.
	if counter.reads[segmentFileName(last.BaseOffset, logSuffix)] < 2*int(last.NextOffset-last.BaseOffset)/2 {
		t.Errorf("unclean start did not re-validate the segment above the recovery point: %v", counter.reads)
	}
}

// TestManagerSchedulerRunsRetention starts the scheduler with a short
// retention check interval on a manual clock and moves the clock one tick:
// the scheduler deletes an expired segment.
func TestManagerSchedulerRunsRetention(t *testing.T) {
	fsys := newDurableMem(t)
	o := DefaultManagerOptions("/data/a")
	o.RetentionCheckInterval = 10 * time.Millisecond
	o.DeleteCheckInterval = 10 * time.Millisecond
	clk := clock.NewManual(testStart)
	m, err := NewManager(fsys, o, clk, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions()
	opts.RetentionMs = time.Minute
	opts.FileDeleteDelay = 0
	l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "r", Partition: 0}, kafka.UUID{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	old := testStart.Add(-time.Hour).UnixMilli()
	for i := 0; i < 20; i++ {
		if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 300, timestamp: old}), 0); err != nil {
			t.Fatal(err)
		}
	}
	m.Start(context.Background())
	clk.BlockUntil(1) // the scheduler's ticker
	clk.Advance(10 * time.Millisecond)
	testutil.Eventually(t, 10*time.Second, func() bool { return l.LogStartOffset() != 0 }, "retention")
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 40 {
		t.Fatalf("scheduler did not apply retention: log start %d", l.LogStartOffset())
	}
	names, _ := fsys.List(l.Dir())
	for _, n := range names {
		if strings.HasSuffix(n, deletedSuffix) {
			t.Fatalf("deleted segment file %s left behind", n)
		}
	}
}
