package cleaner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/vfs"
)

var testTP = kafka.TopicPartition{Topic: "compacted", Partition: 0}

var testStart = time.UnixMilli(1_700_000_000_000)

const testDir = "/data/compacted-0"

// logSource is a LogSource over logs a test replaces after a crash.
type logSource struct {
	mu   sync.Mutex
	logs []*commitlog.Log
}

func (s *logSource) Logs() []*commitlog.Log {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.logs)
}

func (s *logSource) set(l ...*commitlog.Log) {
	s.mu.Lock()
	s.logs = l
	s.mu.Unlock()
}

// compactOptions are small log options so tests roll and index often.
func compactOptions() commitlog.Options {
	o := commitlog.DefaultOptions()
	o.SegmentBytes = 2048
	o.IndexIntervalBytes = 128
	o.SegmentIndexBytes = 4096
	o.FileDeleteDelay = time.Second
	o.Compact = true
	o.SkipRetention = true
	o.MinCleanableDirtyRatio = 0
	o.DeleteRetention = time.Hour
	return o
}

func testCleanerOptions() Options {
	o := DefaultOptions()
	o.DedupeBufferSize = 1 << 20
	o.IOBufferSize = 8 << 10
	o.Backoff = 10 * time.Millisecond
	return o
}

// durableMem is a MemFS whose /data survives a crash.
func durableMem(t testing.TB) *vfs.MemFS {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return fs
}

func openLog(t testing.TB, fsys vfs.FS, clk clock.Clock, opts commitlog.Options, clean bool) *commitlog.Log {
	t.Helper()
	l, err := commitlog.Open(fsys, testDir, testTP, opts, clk, commitlog.StartState{CleanShutdown: clean}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open log: %v", err)
	}
	return l
}

func newCleaner(t testing.TB, fsys vfs.FS, src LogSource, clk clock.Clock) *Cleaner {
	t.Helper()
	c, err := New(fsys, src, testCleanerOptions(), clk, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kv is one record of a test: a nil value is a tombstone.
type kv struct {
	key, value string
	tombstone  bool
}

// appendRecords appends one batch of records (codec) and returns the
// offset of each.
func appendRecords(t testing.TB, l *commitlog.Log, clk clock.Clock, codec int, recs ...kv) []int64 {
	t.Helper()
	batch := recordstest.Batch(t, recordstest.N(len(recs), func(i int) recordstest.Record {
		r := recordstest.Record{Timestamp: clk.Now().UnixMilli(), Key: []byte(recs[i].key)}
		if !recs[i].tombstone {
			r.Value = []byte(recs[i].value)
		}
		return r
	}), recordstest.Compression(codec))
	info, err := l.Append(batch, 0)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	offs := make([]int64, len(recs))
	for i := range offs {
		offs[i] = info.FirstOffset + int64(i)
	}
	return offs
}

// readRecord is a record read back from the log.
type readRecord struct {
	offset     int64
	key, value string
	tombstone  bool
}

// readAll reads every data record from the log start offset, and every
// batch header.
func readAll(t testing.TB, l *commitlog.Log) ([]readRecord, []records.Header) {
	t.Helper()
	var out []readRecord
	var headers []records.Header
	off, leo := l.LogStartOffset(), l.LogEndOffset()
	for off < leo {
		res, err := l.Read(off, 1<<20, leo, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		if res.Size == 0 {
			break
		}
		buf, err := res.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		_, err = records.Batches(buf, func(h records.Header, b []byte) error {
			if err := records.CheckCRC(b); err != nil {
				return err
			}
			headers = append(headers, h)
			if h.IsControl() {
				return nil // consumers never see control records
			}
			return records.ForEachRecord(b, func(r records.Record) error {
				if r.Offset(h) < off {
					return nil
				}
				out = append(out, readRecord{offset: r.Offset(h), key: string(r.Key), value: string(r.Value), tombstone: r.Value == nil})
				return nil
			})
		})
		if err != nil {
			t.Fatalf("decode at %d: %v", off, err)
		}
		off = res.EndOffset
	}
	return out, headers
}

// model is the last record of each key: what compaction must preserve.
type model map[string]readRecord

func (m model) apply(offsets []int64, recs ...kv) {
	for i, r := range recs {
		m[r.key] = readRecord{offset: offsets[i], key: r.key, value: r.value, tombstone: r.tombstone}
	}
}

// checkAgainstModel checks what a consumer from the start sees: offsets
// increase, every live key's latest record is there at its original offset,
// and folding the log gives exactly the model's live keys and values.
func checkAgainstModel(t testing.TB, l *commitlog.Log, m model) []readRecord {
	t.Helper()
	got, _ := readAll(t, l)
	folded := map[string]string{}
	at := map[int64]readRecord{}
	prev := int64(-1)
	for _, r := range got {
		if r.offset <= prev {
			t.Fatalf("offsets do not increase: %d after %d", r.offset, prev)
		}
		prev = r.offset
		at[r.offset] = r
		if r.tombstone {
			delete(folded, r.key)
		} else {
			folded[r.key] = r.value
		}
	}
	want := map[string]string{}
	for k, r := range m {
		if r.tombstone {
			continue
		}
		want[k] = r.value
		if g, ok := at[r.offset]; !ok || g.key != k || g.value != r.value {
			t.Fatalf("latest record of %q (offset %d, %q) not found unchanged: %+v", k, r.offset, r.value, g)
		}
	}
	if !maps.Equal(folded, want) {
		t.Fatalf("log folds to %v, want %v", folded, want)
	}
	return got
}

func cleanOnce(t testing.TB, c *Cleaner) bool {
	t.Helper()
	cleaned, err := c.CleanOnce(context.Background())
	if err != nil {
		t.Fatalf("clean: %v", err)
	}
	return cleaned
}

func key(i int) string { return fmt.Sprintf("key-%03d", i) }
