package cleaner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/vfs"
)

// fillLog writes rounds of values for keys 0..keys-1 (one batch of a few
// records at a time), then tombstones for the first deleted keys, and rolls
// so that everything is cleanable.
func fillLog(t *testing.T, l *commitlog.Log, clk *clock.Manual, codec, keys, rounds, deleted int) model {
	m := model{}
	for round := range rounds {
		for k := 0; k < keys; k += 3 {
			var recs []kv
			for j := k; j < min(k+3, keys); j++ {
				recs = append(recs, kv{key: key(j), value: fmt.Sprintf("v%d-%d", round, j)})
			}
			m.apply(appendRecords(t, l, clk, codec, recs...), recs...)
			clk.Advance(time.Millisecond)
		}
	}
	for k := range deleted {
		rec := kv{key: key(k), tombstone: true}
		m.apply(appendRecords(t, l, clk, codec, rec), rec)
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCleanKeepsLatestValueAndDropsTombstonesAfterRetention(t *testing.T) {
	for _, codec := range []int{records.NoCompression, records.GzipCompression, records.SnappyCompression, records.LZ4Compression, records.ZstdCompression} {
		t.Run(fmt.Sprint("codec", codec), func(t *testing.T) {
			fs := durableMem(t)
			clk := clock.NewManual(testStart)
			l := openLog(t, fs, clk, compactOptions(), false)
			defer l.Close()
			m := fillLog(t, l, clk, codec, 20, 15, 5)
			before := len(l.Segments())
			if before < 5 {
				t.Fatalf("only %d segments; the test wants many", before)
			}
			c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
			if !cleanOnce(t, c) {
				t.Fatal("dirty log not cleaned")
			}
			got := checkAgainstModel(t, l, m)
			// Exactly one record per key: the live values and, within
			// delete.retention.ms, the 5 tombstones.
			if len(got) != 20 {
				t.Fatalf("%d records after cleaning, want 20: %+v", len(got), got)
			}
			if cleanOnce(t, c) {
				t.Fatal("clean log cleaned again before the delete horizon")
			}
			clk.Advance(time.Hour + time.Second)
			if !cleanOnce(t, c) {
				t.Fatal("tombstones past their delete horizon not cleaned")
			}
			got = checkAgainstModel(t, l, m)
			if len(got) != 15 {
				t.Fatalf("%d records after the delete horizon, want the 15 live keys: %+v", len(got), got)
			}
			// Segments shrunk by the first clean are grouped by the second.
			if after := len(l.Segments()); after >= before {
				t.Fatalf("%d segments after cleaning, %d before", after, before)
			}
			for _, r := range got {
				if r.tombstone {
					t.Fatalf("tombstone %+v survived its delete horizon", r)
				}
			}
		})
	}
}

func TestTombstoneBatchGetsDeleteHorizon(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	l := openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	appendRecords(t, l, clk, records.NoCompression, kv{key: "a", value: "1"}, kv{key: "b", value: "1"})
	appendRecords(t, l, clk, records.NoCompression, kv{key: "a", tombstone: true})
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	cleanOnce(t, c)
	_, headers := readAll(t, l)
	if len(headers) != 2 {
		t.Fatalf("%d batches, want 2", len(headers))
	}
	first, tomb := headers[0], headers[1]
	if first.HasDeleteHorizon() || first.BaseOffset != 0 || first.LastOffsetDelta != 1 || first.RecordCount != 1 {
		t.Fatalf("first batch %+v: want base 0, last offset delta kept at 1, one record, no horizon", first)
	}
	want := clk.Now().Add(time.Hour).UnixMilli()
	if !tomb.HasDeleteHorizon() || tomb.BaseTimestamp != want {
		t.Fatalf("tombstone batch %+v: want delete horizon %d", tomb, want)
	}
}

func TestCrashAtSwapLeavesCorrectLog(t *testing.T) {
	// Each case fails one rename of the swap and crashes: before the
	// .log.swap exists the old segments stay; after, Open finishes the swap.
	cases := map[string]func(op vfs.Op, path string) bool{
		"cleaned to swap": func(op vfs.Op, path string) bool {
			return op == vfs.OpRename && strings.HasSuffix(path, ".log.cleaned")
		},
		"old to deleted": func(op vfs.Op, path string) bool {
			return op == vfs.OpRename && strings.HasSuffix(path, ".timeindex") && !strings.Contains(path, "swap")
		},
		"swap to live": func(op vfs.Op, path string) bool {
			return op == vfs.OpRename && strings.HasSuffix(path, ".log.swap")
		},
		"index swap to live": func(op vfs.Op, path string) bool {
			return op == vfs.OpRename && strings.HasSuffix(path, ".timeindex.swap")
		},
	}
	for name, fail := range cases {
		t.Run(name, func(t *testing.T) {
			mem := durableMem(t)
			efs := vfs.NewErrorFS(mem, nil)
			clk := clock.NewManual(testStart)
			l := openLog(t, efs, clk, compactOptions(), false)
			m := fillLog(t, l, clk, records.NoCompression, 12, 10, 3)
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			src := &logSource{logs: []*commitlog.Log{l}}
			c := newCleaner(t, efs, src, clk)
			failed := false
			efs.SetInjector(vfs.InjectorFunc(func(op vfs.Op, path string, _ int) error {
				if fail(op, path) {
					failed = true
					return fmt.Errorf("injected failure of %s %s", op, path)
				}
				return nil
			}))
			if _, err := c.CleanOnce(t.Context()); err == nil {
				t.Fatal("clean with a failing rename succeeded")
			}
			if !failed {
				t.Fatal("the injected failure was never hit")
			}
			efs.SetInjector(nil)
			mem.Crash()
			l = openLog(t, efs, clk, compactOptions(), false)
			defer l.Close()
			checkAgainstModel(t, l, m)
			names, err := mem.List(testDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				if strings.HasSuffix(n, ".swap") || strings.HasSuffix(n, ".cleaned") {
					t.Fatalf("leftover %s after recovery: %v", n, names)
				}
			}
			// The recovered log cleans normally once the failed one's
			// backoff has passed.
			src.set(l)
			clk.Advance(time.Second)
			if !cleanOnce(t, c) {
				t.Fatal("recovered log not cleaned")
			}
			checkAgainstModel(t, l, m)
		})
	}
}

func TestSmallOffsetMapCleansInSteps(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	l := openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	m := fillLog(t, l, clk, records.NoCompression, 60, 6, 10)
	opts := testCleanerOptions()
	opts.DedupeBufferSize = 64 * offsetSlotSize // 57 keys at most
	c, err := New(fs, &logSource{logs: []*commitlog.Log{l}}, opts, clk, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	passes := 0
	for cleanOnce(t, c) {
		passes++
		checkAgainstModel(t, l, m)
		if passes > 50 {
			t.Fatal("cleaning does not converge")
		}
	}
	if passes < 3 {
		t.Fatalf("%d passes; a map of 57 keys over 60 keys x 6 rounds needs several", passes)
	}
	got := checkAgainstModel(t, l, m)
	if len(got) != 60 {
		t.Fatalf("%d records, want 60", len(got))
	}
	cp, err := checkpoint.Read(fs, "/data/"+checkpoint.CleanerOffsetFile)
	if err != nil {
		t.Fatal(err)
	}
	if cp[testTP] != l.Segments()[len(l.Segments())-1].BaseOffset {
		t.Fatalf("cleaner-offset-checkpoint %v, want the active segment's base %d", cp, l.Segments()[len(l.Segments())-1].BaseOffset)
	}
}

func TestPolicyChangeAppliesWithoutRestart(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	opts := compactOptions()
	opts.Compact = false
	l := openLog(t, fs, clk, opts, false)
	defer l.Close()
	m := fillLog(t, l, clk, records.NoCompression, 10, 10, 0)
	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	if cleanOnce(t, c) {
		t.Fatal("a delete-policy log was cleaned")
	}
	opts.Compact = true
	l.SetOptions(opts)
	if !cleanOnce(t, c) {
		t.Fatal("log not cleaned after cleanup.policy became compact")
	}
	if got := checkAgainstModel(t, l, m); len(got) != 10 {
		t.Fatalf("%d records, want 10", len(got))
	}
}

func TestMinCompactionLagAndDirtyRatio(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	opts := compactOptions()
	opts.MinCompactionLag = time.Hour
	l := openLog(t, fs, clk, opts, false)
	defer l.Close()
	fillLog(t, l, clk, records.NoCompression, 10, 10, 0)
	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	if cleanOnce(t, c) {
		t.Fatal("records younger than min.compaction.lag.ms were cleaned")
	}
	clk.Advance(2 * time.Hour)
	opts.MinCleanableDirtyRatio = 1
	l.SetOptions(opts)
	if cleanOnce(t, c) {
		t.Fatal("cleaned although the dirty ratio cannot exceed 1")
	}
	opts.MaxCompactionLag = time.Hour
	l.SetOptions(opts)
	if !cleanOnce(t, c) {
		t.Fatal("dirty data older than max.compaction.lag.ms not cleaned")
	}
}

func TestIdempotentProducersLastBatchKeptEmpty(t *testing.T) {
	fs := durableMem(t)
	clk := clock.NewManual(testStart)
	l := openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	var seq int32
	produce := func(k, v string) int64 {
		now := clk.Now().UnixMilli()
		batch := recordstest.Batch(t, []recordstest.Record{
			{Timestamp: now, Key: []byte(k), Value: []byte(v)},
			{Timestamp: now, Key: []byte(k), Value: []byte(v + "'")},
		}, recordstest.Producer(7, 0, seq))
		info, err := l.Append(batch, 0)
		if err != nil {
			t.Fatal(err)
		}
		seq += 2
		return info.FirstOffset
	}
	produce("a", "1")
	last := produce("a", "2")
	m := model{}
	m.apply(appendRecords(t, l, clk, records.NoCompression, kv{key: "a", value: "3"}), kv{key: "a", value: "3"})
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	c := newCleaner(t, fs, &logSource{logs: []*commitlog.Log{l}}, clk)
	cleanOnce(t, c)
	checkAgainstModel(t, l, m)
	_, headers := readAll(t, l)
	if len(headers) != 2 {
		t.Fatalf("batches %+v: want the producer's emptied last batch and the live record", headers)
	}
	h := headers[0]
	if h.ProducerID != 7 || h.RecordCount != 0 || h.BaseOffset != last || h.LastOffsetDelta != 1 || h.BaseSequence != 2 {
		t.Fatalf("kept batch %+v: want producer 7's empty batch at %d with last offset delta 1 and base sequence 2", h, last)
	}
	// The producer's next batch is in sequence after a restart.
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openLog(t, fs, clk, compactOptions(), false)
	defer l.Close()
	if e, ok := l.ProducerEntry(7); !ok || e.LastSeq() != 3 {
		t.Fatalf("producer state after reopen: %+v %v, want last sequence 3", e, ok)
	}
	produce("b", "1")
}
