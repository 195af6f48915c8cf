package commitlog

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records/recordstest"
	"github.com/sluice-io/sluice/internal/vfs"
)

var testTP = kafka.TopicPartition{Topic: "t", Partition: 0}

// testStart is the manual clock's start; batch timestamps count from it.
var testStart = time.UnixMilli(1_700_000_000_000)

// batchSpec describes a test batch.
type batchSpec struct {
	records   int
	valueSize int
	timestamp int64 // first record's timestamp; records go up by 1 ms
}

// makeBatch builds a plain record batch (base offset 0, partition leader
// epoch -1): record i has key {i}, valueSize bytes i, i+1... and timestamp
// spec.timestamp+i.
func makeBatch(spec batchSpec, opts ...recordstest.Option) []byte {
	recs := recordstest.N(spec.records, func(i int) recordstest.Record {
		v := make([]byte, spec.valueSize)
		for j := range v {
			v[j] = byte(i + j)
		}
		return recordstest.Record{Timestamp: spec.timestamp + int64(i), Key: []byte{byte(i)}, Value: v}
	})
	out, err := recordstest.Build(recs, append([]recordstest.Option{recordstest.LeaderEpoch(-1)}, opts...)...)
	if err != nil {
		panic(fmt.Sprintf("test batch %+v: %v", spec, err))
	}
	return out
}

// testOptions are small enough that tests roll and index often.
func testOptions() Options {
	o := DefaultOptions()
	o.SegmentBytes = 4096
	o.IndexIntervalBytes = 256
	o.SegmentIndexBytes = 1024
	o.FileDeleteDelay = time.Second
	return o
}

type testEnv struct {
	t   testing.TB
	fs  vfs.FS
	clk *clock.Manual
	dir string
}

func newMemEnv(t testing.TB) *testEnv {
	return &testEnv{t: t, fs: newDurableMem(t), clk: clock.NewManual(testStart), dir: "/data/t-0"}
}

// newDurableMem returns a MemFS whose log dir root /data survives a crash,
// as the Manager (or storage format) makes it.
func newDurableMem(t testing.TB) *vfs.MemFS {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	return fs
}

func (e *testEnv) open(opts Options, st StartState) *Log {
	e.t.Helper()
	l, err := Open(e.fs, e.dir, testTP, opts, e.clk, st, slog.New(slog.DiscardHandler))
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	return l
}
