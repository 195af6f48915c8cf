package commitlog

import (
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// These benchmarks use only the Manager's public API, so the same file
// builds against the revision before the background flush for a
// before/after comparison.

func benchEnvInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
		return v
	}
	return def
}

// BenchmarkAppendAcrossRolls appends 16 KiB batches to a Manager's log
// with 1 MiB segments (a roll every 64 appends) on a disk whose every
// fsync takes SLUICE_BENCH_SYNC_MS (default 5) more: with the roll's
// fsyncs under the append lock the roll's append waits for them, with the
// background flush it does not. It reports the append latency's p50, p99
// and max.
func BenchmarkAppendAcrossRolls(b *testing.B) {
	delay := time.Duration(benchEnvInt("SLUICE_BENCH_SYNC_MS", 5)) * time.Millisecond
	fsys := vfs.NewErrorFS(vfs.Default, vfs.InjectorFunc(func(op vfs.Op, _ string, _ int) error {
		if op == vfs.OpSync || op == vfs.OpSyncDir {
			time.Sleep(delay)
		}
		return nil
	}))
	m, err := NewManager(fsys, DefaultManagerOptions(b.TempDir()), clock.Real{}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	opts := DefaultOptions()
	opts.SegmentBytes = 1 << 20
	l, err := m.GetOrCreate(testTP, kafka.UUID{}, opts)
	if err != nil {
		b.Fatal(err)
	}
	batch := benchBatch()
	// The first append writes the leader-epoch-checkpoint (synced once
	// per new epoch): not a roll's cost.
	if _, err := l.Append(benchBatch(), 0); err != nil {
		b.Fatal(err)
	}
	// SLUICE_BENCH_TAIL_FLUSH_MS > 0: a goroutine syncs the log's tail
	// (FlushTail) that often, to see what the checkpoint tick's fsync of
	// the active segment does to appends landing meanwhile.
	if every := time.Duration(benchEnvInt("SLUICE_BENCH_TAIL_FLUSH_MS", 0)) * time.Millisecond; every > 0 {
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for t := time.NewTicker(every); ; {
				select {
				case <-stop:
					t.Stop()
					return
				case <-t.C:
				}
				if err := l.FlushTail(); err != nil {
					b.Error(err)
				}
			}
		}()
		defer func() { close(stop); <-done }()
	}
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(len(batch)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	b.ReportMetric(float64(len(l.Segments())-1), "rolls")
}

// BenchmarkRecoveryAfterKill fills a Manager's log with
// SLUICE_BENCH_LOG_MB MiB (default 288) in segments of
// SLUICE_BENCH_SEGMENT_MB (default 64; the active one holds the rest, 32), lets the rolls' flushes land,
// runs the recovery-point checkpoint tick as the periodic task does, and
// abandons the Manager as kill -9 would (no flush, no clean-shutdown
// marker). Each iteration loads the dir again: re-validation runs from the
// checkpointed recovery point (the active segment, here).
func BenchmarkRecoveryAfterKill(b *testing.B) {
	sizeMB := benchEnvInt("SLUICE_BENCH_LOG_MB", 288)
	segMB := benchEnvInt("SLUICE_BENCH_SEGMENT_MB", 64)
	dir := b.TempDir()
	m, err := NewManager(vfs.Default, DefaultManagerOptions(dir), clock.Real{}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	opts := DefaultOptions()
	opts.SegmentBytes = int64(segMB) << 20
	l, err := m.GetOrCreate(testTP, kafka.UUID{}, opts)
	if err != nil {
		b.Fatal(err)
	}
	batch := benchBatch()
	for l.Size() < int64(sizeMB)<<20 {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	segs := l.Segments()
	active := segs[len(segs)-1].BaseOffset
	for deadline := time.Now().Add(time.Minute); l.RecoveryPoint() < active; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("recovery point %d never reached the active segment's base %d", l.RecoveryPoint(), active)
		}
	}
	// The recovery-point checkpoint tick, which also syncs the active
	// segments' tails (FlushTail); SLUICE_BENCH_TAIL_MB more are appended
	// after it, as the writes of the interval since the last tick.
	if err := m.FlushTailsAndCheckpoint(); err != nil {
		b.Fatal(err)
	}
	for tail := l.Size() + int64(benchEnvInt("SLUICE_BENCH_TAIL_MB", 0))<<20; l.Size() < tail; {
		if _, err := l.Append(batch, 0); err != nil {
			b.Fatal(err)
		}
	}
	checkpointed := float64(l.RecoveryPoint()) / float64(l.LogEndOffset()) // of the records
	b.SetBytes(int64(sizeMB) << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m2, err := NewManager(vfs.Default, DefaultManagerOptions(dir), clock.Real{}, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		// Close the files only: no checkpoint, no marker, so the next
		// iteration recovers again.
		for _, l := range m2.Logs() {
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(checkpointed, "checkpointed-fraction")
}

// BenchmarkTailFlushManyLogs times the recovery-point checkpoint tick
// (FlushTailsAndCheckpoint) over SLUICE_BENCH_LOGS logs (default 1000),
// each of which took one 16 KiB batch since the previous tick: the tick's
// cost when every partition of a broker is written to.
func BenchmarkTailFlushManyLogs(b *testing.B) {
	n := benchEnvInt("SLUICE_BENCH_LOGS", 1000)
	if w := benchEnvInt("SLUICE_BENCH_WORKERS", 0); w > 0 {
		defer func(w int) { tailFlushWorkers = w }(tailFlushWorkers)
		tailFlushWorkers = w
	}
	mopts := DefaultManagerOptions(b.TempDir())
	mopts.TailFlushMinBytes = int64(benchEnvInt("SLUICE_BENCH_MIN_BYTES", 0))
	m, err := NewManager(vfs.Default, mopts, clock.Real{}, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	logs := make([]*Log, n)
	for i := range logs {
		tp := kafka.TopicPartition{Topic: "many", Partition: int32(i)}
		if logs[i], err = m.GetOrCreate(tp, kafka.UUID{}, DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	batch := benchBatch()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, l := range logs {
			if _, err := l.Append(batch, 0); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := m.FlushTailsAndCheckpoint(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer() // the deferred Close flushes every log: not the tick's cost
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/log")
}

// BenchmarkCreateManyLogs creates SLUICE_BENCH_LOGS logs (default 10000)
// in one Manager on an in-memory disk, over SLUICE_BENCH_DIRS log dirs
// (default 1): what placing each new log costs when a broker already
// holds thousands.
func BenchmarkCreateManyLogs(b *testing.B) {
	n := benchEnvInt("SLUICE_BENCH_LOGS", 10000)
	var dirs []string
	for d := range max(benchEnvInt("SLUICE_BENCH_DIRS", 1), 1) {
		dirs = append(dirs, fmt.Sprintf("/data%d", d))
	}
	for i := 0; i < b.N; i++ {
		m, err := NewManager(vfs.NewMem(), DefaultManagerOptions(dirs...), clock.Real{}, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		for p := range n {
			if _, err := m.GetOrCreate(kafka.TopicPartition{Topic: "many", Partition: int32(p)}, kafka.UUID{}, DefaultOptions()); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		m.Close()
		b.StartTimer()
	}
}

// BenchmarkCloseManyLogs times the Manager's clean close of
// SLUICE_BENCH_LOGS logs (default 1000) on disk, each with one unsynced
// 16 KiB batch: the flushes of a broker's clean shutdown
// (SLUICE_BENCH_WORKERS at a time).
func BenchmarkCloseManyLogs(b *testing.B) {
	n := benchEnvInt("SLUICE_BENCH_LOGS", 1000)
	if w := benchEnvInt("SLUICE_BENCH_WORKERS", 0); w > 0 {
		defer func(w int) { tailFlushWorkers = w }(tailFlushWorkers)
		tailFlushWorkers = w
	}
	batch := benchBatch()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		m, err := NewManager(vfs.Default, DefaultManagerOptions(b.TempDir()), clock.Real{}, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		for p := range n {
			l, err := m.GetOrCreate(kafka.TopicPartition{Topic: "many", Partition: int32(p)}, kafka.UUID{}, DefaultOptions())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.Append(batch, 0); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
