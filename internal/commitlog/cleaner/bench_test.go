package cleaner

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
	"github.com/sluice-io/sluice/internal/vfs"
)

// BenchmarkCleaner measures the cleaner's throughput (MB/s of log cleaned,
// as Go reports from SetBytes) over a log where 10% of the records are the
// latest of their key, next to a plain sequential read of the same files
// in the same run. SLUICE_CLEANER_BENCH_MB sets the log size (default 16;
// the figure is 1024). Files are on the OS file system under the
// test's temporary dir, so both usually read from the page cache.
//
//	SLUICE_CLEANER_BENCH_MB=1024 go test -run '^$' -bench Cleaner -benchtime 3x ./internal/commitlog/cleaner
func BenchmarkCleaner(b *testing.B) {
	mb := 16
	if v := os.Getenv("SLUICE_CLEANER_BENCH_MB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("SLUICE_CLEANER_BENCH_MB=%q: want a positive number", v)
		}
		mb = n
	}
	template := filepath.Join(b.TempDir(), "template")
	size := writeBenchLog(b, template, int64(mb)<<20)
	b.Run("clean", func(b *testing.B) {
		b.SetBytes(size)
		for i := range b.N {
			b.StopTimer()
			root := filepath.Join(b.TempDir(), strconv.Itoa(i))
			if err := os.CopyFS(filepath.Join(root, "compacted-0"), os.DirFS(template)); err != nil {
				b.Fatal(err)
			}
			clk := clock.NewManual(testStart)
			l, err := commitlog.Open(vfs.Default, filepath.Join(root, "compacted-0"), testTP, benchLogOptions(), clk,
				commitlog.StartState{CleanShutdown: true}, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			opts := DefaultOptions()
			c, err := New(vfs.Default, &logSource{logs: []*commitlog.Log{l}}, opts, clk, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if cleaned, err := c.CleanOnce(context.Background()); err != nil || !cleaned {
				b.Fatalf("clean: %v %v", cleaned, err)
			}
			b.StopTimer()
			if i == 0 {
				b.ReportMetric(float64(l.Size())/float64(size), "kept-ratio")
			}
			l.Close()
			b.StartTimer()
		}
	})
	b.Run("sequential-read", func(b *testing.B) {
		b.SetBytes(size)
		buf := make([]byte, 1<<20)
		for range b.N {
			names, err := os.ReadDir(template)
			if err != nil {
				b.Fatal(err)
			}
			for _, n := range names {
				if filepath.Ext(n.Name()) != ".log" {
					continue
				}
				f, err := os.Open(filepath.Join(template, n.Name()))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
		}
	})
}

func benchLogOptions() commitlog.Options {
	o := commitlog.DefaultOptions()
	o.SegmentBytes = 64 << 20
	o.Compact = true
	o.SkipRetention = true
	o.MinCleanableDirtyRatio = 0.5
	return o
}

// writeBenchLog writes batches of 100 records of ~100-byte values whose keys
// cycle over a tenth as many keys as records, so a tenth survive a clean.
func writeBenchLog(b *testing.B, dir string, target int64) int64 {
	clk := clock.NewManual(testStart)
	l, err := commitlog.Open(vfs.Default, dir, testTP, benchLogOptions(), clk, commitlog.StartState{}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	const perBatch, valueSize = 100, 100
	recordsTotal := target / (valueSize + 30)
	keys := max(recordsTotal/10, 1)
	value := make([]byte, valueSize)
	for i := int64(0); l.Size() < target; {
		bld := records.NewBuilder(records.NonIdempotent(records.NoCompression))
		for range perBatch {
			bld.Add(clk.Now().UnixMilli(), fmt.Appendf(nil, "key-%09d", i%keys), value, nil)
			i++
		}
		batch, err := bld.Build()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Roll(); err != nil {
		b.Fatal(err)
	}
	size := l.Size()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	return size
}
