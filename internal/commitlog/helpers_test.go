package commitlog

import (
	"encoding/binary"
	"hash/crc32"
	"log/slog"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/clock"
	"sluice/internal/kafka"
	"sluice/internal/vfs"
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

// makeBatch builds a record batch (magic 2, base offset 0, CRC-32C) with kmsg.
func makeBatch(spec batchSpec) []byte {
	var recs []byte
	for i := 0; i < spec.records; i++ {
		r := kmsg.Record{TimestampDelta: int32(i), OffsetDelta: int32(i), Key: []byte{byte(i)}, Value: make([]byte, spec.valueSize)}
		for j := range r.Value {
			r.Value[j] = byte(i + j)
		}
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1) // the length varint of 0 is one byte
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1, Magic: 2,
		LastOffsetDelta: int32(spec.records - 1),
		FirstTimestamp:  spec.timestamp, MaxTimestamp: spec.timestamp + int64(spec.records-1),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(spec.records), Records: recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	crc := crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(out[17:], crc)
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
