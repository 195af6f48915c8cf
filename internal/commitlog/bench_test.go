package commitlog

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/vfs"
)

// benchBatch is 16 records of 1 KiB: a 16 KiB producer batch.
func benchBatch() []byte {
	return makeBatch(batchSpec{records: 16, valueSize: 1024, timestamp: testStart.UnixMilli()})
}

func openBenchLog(b *testing.B, dir string, opts Options, st StartState) *Log {
	b.Helper()
	l, err := Open(vfs.Default, dir, testTP, opts, clock.Real{}, st, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// BenchmarkAppend measures leader appends of 16 KiB batches (1 KiB records)
// to a real file system, without fsync (Kafka's default flush policy).
func BenchmarkAppend(b *testing.B) {
	opts := DefaultOptions()
	opts.SegmentBytes = 1 << 30
	l := openBenchLog(b, filepath.Join(b.TempDir(), "t-0"), opts, StartState{})
	defer l.Close()
	batch := benchBatch()
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead measures sequential 1 MiB reads copied out of the page cache.
func BenchmarkRead(b *testing.B) {
	opts := DefaultOptions()
	opts.SegmentBytes = 64 << 20
	l := openBenchLog(b, filepath.Join(b.TempDir(), "t-0"), opts, StartState{})
	defer l.Close()
	batch := benchBatch()
	for l.Size() < 32<<20 {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	leo := l.LogEndOffset()
	b.SetBytes(1 << 20)
	b.ResetTimer()
	off := int64(0)
	for i := 0; i < b.N; i++ {
		res, err := l.Read(off, 1<<20, leo, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := res.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
		off += 1 << 20 / int64(len(batch)) * 16
		if off >= leo {
			off = 0
		}
	}
}

// BenchmarkRecovery measures opening a log after an unclean stop where only
// the unflushed tail (the last 8 MiB) must be re-validated. The log's size
// in MiB comes from SLUICE_BENCH_LOG_MB (default 256; 16 with -short).
func BenchmarkRecovery(b *testing.B) {
	sizeMB := 256
	if testing.Short() {
		sizeMB = 16
	}
	if v, err := strconv.Atoi(os.Getenv("SLUICE_BENCH_LOG_MB")); err == nil && v > 0 {
		sizeMB = v
	}
	opts := DefaultOptions()
	opts.SegmentBytes = 32 << 20
	dir := filepath.Join(b.TempDir(), "t-0")
	l := openBenchLog(b, dir, opts, StartState{})
	batch := benchBatch()
	for l.Size() < int64(sizeMB-8)<<20 {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		b.Fatal(err)
	}
	st := StartState{RecoveryPoint: l.RecoveryPoint()}
	for l.Size() < int64(sizeMB)<<20 {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(sizeMB) << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l := openBenchLog(b, dir, opts, st)
		b.StopTimer()
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}
