package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPartitionsProfileLive profiles Sluice (the binary SLUICE_COMPARE_BIN names) through
// its debug listener while it creates SLUICE_COMPARE_PARTS partitions (default 10000) and
// while it restarts on them after kill -9 and after a clean stop, and over the phase's
// fixed-rate run, writing create.pprof, kill-restart.pprof, clean-restart.pprof and
// fixed-rate.pprof to the dir SLUICE_COMPARE_PARTS_PROFILE names
// (skipped without both). It is how the partitions phase's slow steps were found.
func TestPartitionsProfileLive(t *testing.T) {
	dir, bin := os.Getenv("SLUICE_COMPARE_PARTS_PROFILE"), os.Getenv("SLUICE_COMPARE_BIN")
	if dir == "" || bin == "" {
		t.Skip("SLUICE_COMPARE_BIN and SLUICE_COMPARE_PARTS_PROFILE (an output dir) run it")
	}
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("SLUICE_COMPARE_PARTS")); err == nil {
		n = v
	}
	b, err := newSluiceBroker(bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// The server's log (its start-up steps, timed) is kept beside the profiles.
	defer func() {
		if raw, err := os.ReadFile(b.logPath); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "server.log"), raw, 0o644)
		}
	}()
	debug, err := b.withDebugListener()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	acked := newPartCounts(n)
	profiled(ctx, t, debug, filepath.Join(dir, "create.pprof"), 30, func() {
		d, err := createAndTouch(ctx, b, partsTopic, n, acked)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("created %d partitions in %.2f s", n, d.Seconds())
	})
	cfg := partsConfig{Partitions: n, Producers: 4, Bytes: 256 << 20, MaxRun: time.Minute}
	if _, err := producePartitions(ctx, b, partsTopic, cfg, acked); err != nil {
		t.Fatal(err)
	}
	if err := b.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	restartProfiled(ctx, t, b, debug, filepath.Join(dir, "kill-restart.pprof"), 30, n, acked)
	t0 := time.Now()
	if err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("clean stop %.2f s", time.Since(t0).Seconds())
	restartProfiled(ctx, t, b, debug, filepath.Join(dir, "clean-restart.pprof"), 15, n, acked)
	// The phase's fixed-rate end-to-end run, profiled over its measured window.
	spec := partsFixedSpec(cfg, profile{RateWarm: 5, RateMeasure: 20})
	profiled(ctx, t, debug, filepath.Join(dir, "fixed-rate.pprof"), 25, func() {
		res, err := runLoad(ctx, b, spec)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("fixed rate %.1f MB/s: end-to-end p50 %.1f ms, p99 %.1f ms, broker %.1f CPU-s", res.MBps(),
			ms(res.E2E.Quantile(0.5)), ms(res.E2E.Quantile(0.99)), res.CPUSeconds)
	})
}

// profiled runs fn while a CPU profile of the broker is taken for secs seconds from the
// moment its debug listener answers (pprof's handler cannot be cut short and still answer,
// so secs should cover fn; the profile's idle tail adds no samples).
func profiled(ctx context.Context, t *testing.T, debug, path string, secs int, fn func()) {
	done := make(chan error, 1)
	go func() { done <- fetchProfileUntil(ctx, debug, path, secs) }()
	fn()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// restartProfiled relaunches b via restartToProduces with a CPU profile taken from the
// moment the debug listener answers.
func restartProfiled(ctx context.Context, t *testing.T, b *sluiceBroker, debug, path string, secs, n int, acked *partCounts) {
	dumps := make(chan struct{})
	go func() {
		defer close(dumps)
		goroutineDumps(ctx, debug, strings.TrimSuffix(path, ".pprof"))
	}()
	defer func() { <-dumps }()
	if os.Getenv("SLUICE_COMPARE_PARTS_PERF") == "1" {
		// The log dir loads before the debug listener binds, so pprof misses it: perf
		// samples the whole machine (root) from before the exec (`perf report --comm sluice`).
		perf := exec.CommandContext(ctx, "perf", "record", "-a", "-g", "-o", strings.TrimSuffix(path, ".pprof")+".perf.data", "--", "sleep", strconv.Itoa(secs))
		if err := perf.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := perf.Wait(); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(500 * time.Millisecond)
	}
	profiled(ctx, t, debug, path, secs, func() {
		first, all, err := restartToProduces(ctx, b, partsTopic, n, acked)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: first produce %.2f s, all %.2f s", filepath.Base(path), first.Seconds(), all.Seconds())
	})
}

// fetchProfileUntil retries until the debug listener answers, then takes a secs-second
// CPU profile.
func fetchProfileUntil(ctx context.Context, debug, path string, secs int) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", debug, secs)
	for {
		err := fetchProfile(ctx, url, path, time.Duration(secs+30)*time.Second)
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// goroutineDumps saves the broker's goroutines (aggregated stacks) 2, 4 and 6 s after it
// was relaunched, as PREFIX-goroutines-N.txt: where a restart waits, which a CPU
// profile does not show.
func goroutineDumps(ctx context.Context, debug, prefix string) {
	for i := 1; i <= 3; i++ {
		if sleepCtx(ctx, 2*time.Second) != nil {
			return
		}
		if err := fetchProfile(ctx, debug+"/debug/pprof/goroutine?debug=1", fmt.Sprintf("%s-goroutines-%d.txt", prefix, i), 10*time.Second); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine dump:", err)
		}
	}
}
