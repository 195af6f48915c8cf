package commitlog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// logBuffer collects a logger's output, safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) count(substr string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), substr)
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// batchAt is where a batch of a segment file starts.
type batchAt struct {
	pos  int64
	base int64
	next int64
}

// segmentBatches lists the batches of a segment file.
func segmentBatches(t *testing.T, fsys vfs.FS, path string) []batchAt {
	t.Helper()
	data, err := vfs.ReadFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	var out []batchAt
	pos := int64(0)
	if _, err := records.Batches(data, func(h records.Header, b []byte) error {
		out = append(out, batchAt{pos: pos, base: h.BaseOffset, next: h.NextOffset()})
		pos += int64(len(b))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeByte overwrites one byte of a file.
func writeByte(t *testing.T, fsys vfs.FS, path string, pos int64, b byte) {
	t.Helper()
	f, err := fsys.OpenReadWrite(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{b}, pos); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedBatchFailsOnlyReadsThatReachIt damages the magic byte of a
// batch in the middle of a sealed segment (after a clean stop, as a disk
// would): a read from the segment's start returns the intact batches before
// it, a read from the damaged batch fails with ErrCorruptBatch naming the
// file, position and offset, later segments read as before, and the
// damage is logged and counted once however often it is read.
func TestDamagedBatchFailsOnlyReadsThatReachIt(t *testing.T) {
	env := newMemEnv(t)
	opts := testOptions()
	l := env.open(opts, StartState{})
	appendUntilSegments(t, l, 3)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	path := env.dir + "/" + segmentFileName(0, logSuffix)
	batches := segmentBatches(t, env.fs, path)
	if len(batches) < 6 {
		t.Fatalf("segment 0 holds %d batches, the test needs 6", len(batches))
	}
	bad := batches[len(batches)/2]
	writeByte(t, env.fs, path, bad.pos+16, 0x7f) // magic

	var logs logBuffer
	l, err := Open(env.fs, env.dir, testTP, opts, env.clk, StartState{CleanShutdown: true}, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reported := 0
	l.onCorrupt = func(*CorruptBatchError) { reported++ }

	res, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatalf("read from before the damage: %v", err)
	}
	if res.FirstOffset != 0 || res.EndOffset != bad.base {
		t.Fatalf("read from before the damage returned [%d, %d), want [0, %d)", res.FirstOffset, res.EndOffset, bad.base)
	}
	data, err := res.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) != bad.pos {
		t.Fatalf("read returned %d bytes, want the %d before the damage", len(data), bad.pos)
	}
	// Reads starting in the damaged batch fail; one starting later may
	// skip it through an offset index entry, as Kafka's does.
	for _, off := range []int64{bad.base, bad.next - 1} {
		_, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		var ce *CorruptBatchError
		if !errors.Is(err, ErrCorruptBatch) || !errors.As(err, &ce) {
			t.Fatalf("read at %d, at or after the damage: %v", off, err)
		}
		if ce.File != path || ce.Position != bad.pos || ce.Offset != bad.base {
			t.Fatalf("read at %d: damage reported at %s %d (offset %d), want %s %d (offset %d)", off, ce.File, ce.Position, ce.Offset, path, bad.pos, bad.base)
		}
	}
	second := l.Segments()[1]
	if res, err := l.Read(second.BaseOffset, 1<<20, l.LogEndOffset(), true); err != nil || res.FirstOffset != second.BaseOffset {
		t.Fatalf("read of the next segment: %+v %v", res, err)
	}
	if l.Offline() {
		t.Fatal("damage took the log offline")
	}
	if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 10}), 0); err != nil {
		t.Fatalf("append after damage was read: %v", err)
	}
	if reported != 1 || logs.count("corrupt record batch on disk") != 1 {
		t.Fatalf("damage reported %d times, logged %d times; want once", reported, logs.count("corrupt record batch on disk"))
	}
	if want := fmt.Sprintf("position=%d offset=%d", bad.pos, bad.base); logs.count(want) != 1 {
		t.Fatalf("log line lacks %q:\n%s", want, logs.buf.String())
	}
}

// TestDamagedBatchCountedInManagerMetric reads a damaged batch through a
// Manager's log: the node's registry counts it once, for its partition.
func TestDamagedBatchCountedInManagerMetric(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	reg := prometheus.NewRegistry()
	o := DefaultManagerOptions("/data/a")
	o.Defaults, o.Metrics = testOptions(), reg
	m, err := NewManager(fsys, o, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	tp := kafka.TopicPartition{Topic: "d", Partition: 3}
	l, err := m.GetOrCreate(tp, kafka.UUID{}, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	appendUntilSegments(t, l, 2)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	path := "/data/a/d-3/" + segmentFileName(0, logSuffix)
	batches := segmentBatches(t, fsys, path)
	writeByte(t, fsys, path, batches[1].pos+16, 0x7f)
	reg = prometheus.NewRegistry()
	o.Metrics = reg
	if m, err = NewManager(fsys, o, clk, nil); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, _ = m.Get(tp)
	for range 3 {
		if _, err := l.Read(batches[1].base, 1<<20, l.LogEndOffset(), true); !errors.Is(err, ErrCorruptBatch) {
			t.Fatalf("read at the damage: %v", err)
		}
	}
	if got := counterValue(t, reg, "sluice_log_corrupt_batches_total", map[string]string{"topic": "d", "partition": "3"}); got != 1 {
		t.Fatalf("sluice_log_corrupt_batches_total{d-3} = %v, want 1", got)
	}
}

// counterValue reads one series of a counter from reg (-1 when absent).
func counterValue(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			for _, lp := range m.GetLabel() {
				if labels[lp.GetName()] != lp.GetValue() {
					continue metrics
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// TestLogStartCheckpointBeyondLogEndIsIgnored reopens a cleanly stopped log
// with a log start checkpoint far beyond its end: the checkpoint is logged
// and ignored, every record stays readable (Kafka would delete them all).
func TestLogStartCheckpointBeyondLogEndIsIgnored(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	appendUntilSegments(t, l, 3)
	leo := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	l, err := Open(env.fs, env.dir, testTP, testOptions(), env.clk,
		StartState{CleanShutdown: true, LogStartOffset: leo + 1_000_000, RecoveryPoint: leo}, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.LogStartOffset() != 0 || l.LogEndOffset() != leo {
		t.Fatalf("log [%d, %d) after a bad checkpoint, want [0, %d)", l.LogStartOffset(), l.LogEndOffset(), leo)
	}
	if got := len(readAll(t, l)); got == 0 {
		t.Fatal("no batch readable")
	}
	if logs.count("log-start-offset-checkpoint is beyond the log end offset") != 1 {
		t.Fatalf("the ignored checkpoint was not logged:\n%s", logs.buf.String())
	}
}

// TestRecoveryPointBeyondLogEndIsIgnored reopens after an unclean stop with
// a recovery point far beyond the log end and a damaged record in a sealed
// segment (its CRC fails; its header is intact): a trusted recovery point
// would leave it, the ignored one makes every segment re-validated, so the
// log is cut at the damage, and the recovery point stays inside the log.
func TestRecoveryPointBeyondLogEndIsIgnored(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	appendUntilSegments(t, l, 3)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	leo := l.LogEndOffset()
	path := env.dir + "/" + segmentFileName(0, logSuffix)
	batches := segmentBatches(t, env.fs, path)
	writeByte(t, env.fs, path, batches[2].pos+records.HeaderSize+4, 0xee) // inside the records: only the CRC tells
	var logs logBuffer
	l, err := Open(env.fs, env.dir, testTP, testOptions(), env.clk, StartState{RecoveryPoint: leo + 1_000_000}, logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.LogEndOffset() != batches[2].base || l.RecoveryPoint() > l.LogEndOffset() {
		t.Fatalf("log end %d recovery point %d, want the log cut at %d", l.LogEndOffset(), l.RecoveryPoint(), batches[2].base)
	}
	if logs.count("recovery-point-offset-checkpoint is beyond the log end offset") != 1 {
		t.Fatalf("the ignored recovery point was not logged:\n%s", logs.buf.String())
	}
}

// removeSegment deletes every file of the segment at base, as an operator
// or a broken disk might.
func removeSegment(t *testing.T, fsys vfs.FS, dir string, base int64) {
	t.Helper()
	for _, suffix := range segmentSuffixes() {
		if err := fsys.Remove(dir + "/" + segmentFileName(base, suffix)); err != nil && !vfs.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// TestMissingMiddleSegmentStopsLog deletes a middle segment of a cleanly
// stopped log: the reopened log is stopped with an error naming the missing
// offsets (reads and appends fail with ErrOffline, which the broker answers
// as KAFKA_STORAGE_ERROR) instead of serving around a silent hole.
func TestMissingMiddleSegmentStopsLog(t *testing.T) {
	env := newMemEnv(t)
	l := env.open(testOptions(), StartState{})
	appendUntilSegments(t, l, 4)
	segs := l.Segments()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	removeSegment(t, env.fs, env.dir, segs[1].BaseOffset)
	var logs logBuffer
	l, err := Open(env.fs, env.dir, testTP, testOptions(), env.clk, StartState{CleanShutdown: true}, logs.logger())
	if err != nil {
		t.Fatalf("open with a missing segment: %v", err)
	}
	defer l.Close()
	if !l.Offline() {
		t.Fatal("a log with a missing segment is online")
	}
	_, err = l.Read(0, 1<<20, l.LogEndOffset(), true)
	var missing *MissingSegmentError
	if !errors.Is(err, ErrOffline) || !errors.As(err, &missing) {
		t.Fatalf("read of a log with a missing segment: %v", err)
	}
	if missing.From != segs[1].BaseOffset || missing.To != segs[2].BaseOffset {
		t.Fatalf("missing offsets [%d, %d), want [%d, %d)", missing.From, missing.To, segs[1].BaseOffset, segs[2].BaseOffset)
	}
	if _, err := l.Append(makeBatch(batchSpec{records: 1, valueSize: 10}), 0); !errors.Is(err, ErrOffline) {
		t.Fatalf("append to a log with a missing segment: %v", err)
	}
	if msg := ClientMessage(err); !strings.Contains(msg, "no segment") {
		t.Fatalf("client message %q does not say what is missing", msg)
	}
	if logs.count("partition log stopped") != 1 {
		t.Fatalf("stop logged %d times, want once:\n%s", logs.count("partition log stopped"), logs.buf.String())
	}
}

// TestMissingSegmentJudgedWithTopicOptions loads, through a Manager, two
// partitions of one dir whose middle segments are gone: the log of a
// topic that is not compacted is stopped when the broker gives it its
// options, the other partitions keep working and the dir stays online (and
// gets its clean-shutdown marker); a hole on a compacted topic, or below
// the cleaner's checkpoint, is the cleaner's and stops nothing.
func TestMissingSegmentJudgedWithTopicOptions(t *testing.T) {
	fsys := newDurableMem(t)
	clk := clock.NewManual(testStart)
	m := newTestManager(t, fsys, clk, "/data/a")
	tps := []kafka.TopicPartition{{Topic: "plain", Partition: 0}, {Topic: "compacted", Partition: 0},
		{Topic: "cleaned", Partition: 0}, {Topic: "healthy", Partition: 0}}
	bases := map[kafka.TopicPartition][]SegmentInfo{}
	for _, tp := range tps {
		l, err := m.GetOrCreate(tp, kafka.UUID{}, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		appendUntilSegments(t, l, 4)
		bases[tp] = l.Segments()
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tp := range tps[:3] {
		removeSegment(t, fsys, "/data/a/"+tp.String(), bases[tp][1].BaseOffset)
	}
	cleaned := map[kafka.TopicPartition]int64{tps[2]: bases[tps[2]][2].BaseOffset}
	if err := checkpoint.Write(fsys, "/data/a/"+checkpoint.CleanerOffsetFile, cleaned); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, fsys, clk, "/data/a")
	compact := testOptions()
	compact.Compact = true
	for _, tp := range tps {
		l, ok := m.Get(tp)
		if !ok {
			t.Fatalf("%s not loaded", tp)
		}
		if l.Offline() {
			t.Fatalf("%s offline before its options are known", tp)
		}
		opts := testOptions()
		if tp == tps[1] {
			opts = compact
		}
		l.SetOptions(opts)
		if got, want := l.Offline(), tp == tps[0]; got != want {
			t.Fatalf("%s offline %v after its options, want %v", tp, got, want)
		}
	}
	healthy, _ := m.Get(tps[3])
	if _, err := healthy.Append(makeBatch(batchSpec{records: 1, valueSize: 10}), 0); err != nil {
		t.Fatalf("append to a healthy partition of the dir: %v", err)
	}
	if len(m.OfflineDirs()) != 0 {
		t.Fatalf("a stopped log took its dir offline: %v", m.OfflineDirs())
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := fsys.Stat("/data/a/" + CleanShutdownFile); err != nil {
		t.Fatalf("no clean shutdown marker after a stopped log: %v", err)
	}
}

// TestFullDiskSaysSo fills the disk under two partitions of a dir: every
// append fails with ErrStorage whose client message says the device is
// full, the episode is logged once for the dir however many appends fail,
// and its end once when an append succeeds again.
func TestFullDiskSaysSo(t *testing.T) {
	budget := vfs.NewWriteBudget(1 << 30)
	efs := vfs.NewErrorFS(newDurableMem(t), budget)
	var logs logBuffer
	o := DefaultManagerOptions("/data/a")
	o.Defaults = testOptions()
	m, err := NewManager(efs, o, clock.NewManual(testStart), logs.logger())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var ls []*Log
	for p := range int32(2) {
		l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "f", Partition: p}, kafka.UUID{}, testOptions())
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	budget.Set(0)
	for range 3 {
		for _, l := range ls {
			_, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0)
			if !errors.Is(err, ErrStorage) || ClientMessage(err) != NoSpaceMessage {
				t.Fatalf("append on a full disk: %v (message %q)", err, ClientMessage(err))
			}
		}
	}
	if n := logs.count("log dir full"); n != 1 {
		t.Fatalf("full disk logged %d times, want once:\n%s", n, logs.buf.String())
	}
	budget.Set(1 << 30)
	for _, l := range ls {
		if _, err := l.Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0); err != nil {
			t.Fatalf("append after space came back: %v", err)
		}
	}
	if n := logs.count("log dir has space again"); n != 1 {
		t.Fatalf("end of the episode logged %d times, want once:\n%s", n, logs.buf.String())
	}
	budget.Set(0)
	if _, err := ls[0].Append(makeBatch(batchSpec{records: 2, valueSize: 100}), 0); !errors.Is(err, ErrStorage) {
		t.Fatalf("append on a full disk again: %v", err)
	}
	if n := logs.count("log dir full"); n != 2 {
		t.Fatalf("a second episode logged %d lines in all, want 2", n)
	}
	budget.Set(1 << 30)
}
