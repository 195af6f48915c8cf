package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLoadGeneratorKafkaLive runs the omb phase's 32-producer max-rate shape against the
// pinned Kafka (bench/kafka-ref; skipped unless SLUICE_COMPARE_KAFKA=1). With
// SLUICE_COMPARE_KGO_LOG=FILE every client logs at debug level to FILE and Kafka's logs are
// copied next to it before the broker is removed.
func TestLoadGeneratorKafkaLive(t *testing.T) {
	if os.Getenv("SLUICE_COMPARE_KAFKA") != "1" {
		t.Skip("SLUICE_COMPARE_KAFKA=1 starts Kafka through bench/kafka-ref")
	}
	ref, err := filepath.Abs("../../kafka-ref")
	if err != nil {
		t.Fatal(err)
	}
	b, err := newKafkaBroker(ref, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SLUICE_COMPARE_SESSION") == "1" {
		ombSessionBefore(ctx, t, ref, b)
	}
	spec := loadSpec{Topic: "omb-go-max-p32-logged", Partitions: ombPartitions, Producers: 32, KeyRange: ombKeyRange,
		Warm: 2 * time.Second, Measure: 4 * time.Second}
	if path := os.Getenv("SLUICE_COMPARE_KGO_LOG"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		t0 := time.Now()
		spec.ClientOpts = []kgo.Opt{kgo.WithLogger(kgo.BasicLogger(f, kgo.LogLevelDebug, func() string {
			return fmt.Sprintf("%9.3f ", time.Since(t0).Seconds())
		}))}
		defer copyKafkaLogs(t, b, filepath.Dir(path))
		jstat := exec.CommandContext(ctx, "jstat", "-gcutil", "-t", strconv.Itoa(b.PID()), "500")
		if out, err := os.Create(filepath.Join(filepath.Dir(path), "jstat.txt")); err == nil {
			jstat.Stdout = out
			if jstat.Start() == nil {
				defer func() { _ = jstat.Process.Kill(); _ = jstat.Wait(); out.Close() }()
			}
		}
	}
	if err := createTopic(ctx, b, spec.Topic, spec.Partitions); err != nil {
		t.Fatal(err)
	}
	k0, self0, wait0 := cpuOf(t, b.PID()), cpuOf(t, os.Getpid()), runQueueWait(b.PID())
	t0 := time.Now()
	res, err := runLoad(ctx, b, spec)
	t.Logf("whole run %.1f s: Kafka CPU %.1f s, waiting for a CPU %.1f s; generator CPU %.1f s; load %s",
		time.Since(t0).Seconds(), cpuOf(t, b.PID())-k0, runQueueWait(b.PID())-wait0, cpuOf(t, os.Getpid())-self0, load())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d producers: %.1f MB/s, broker CPU %.1f s over %.1f s", spec.Producers, res.MBps(), res.CPUSeconds, res.Seconds)
}

func copyKafkaLogs(t *testing.T, b *kafkaBroker, dir string) {
	for _, name := range []string{"server.log", "stdout.log"} {
		raw, err := os.ReadFile(filepath.Join(b.runDir, "node1", "logs", name))
		if err != nil {
			t.Log(err)
			continue
		}
		_ = os.WriteFile(filepath.Join(dir, "kafka-"+name), raw, 0o644)
	}
}

// ombSessionBefore runs what an omb session runs before its 32-producer max-rate run.
func ombSessionBefore(ctx context.Context, t *testing.T, ref string, b broker) {
	prof, _ := profileNamed("quick")
	s := &suite{prof: prof, kafkaRef: ref, res: newResults(), log: slog.Default()}
	if err := s.warmBroker(ctx, b); err != nil {
		t.Fatal(err)
	}
	for _, n := range ombProducerCounts {
		s.ombGo(ctx, b, sysKafka, 1, n, true)
	}
	if err := createTopic(ctx, b, "omb-perf-p4", ombPartitions); err != nil {
		t.Fatal(err)
	}
	run, err := runProducersWindows(ctx, ref, b, "omb-perf-p4", ombPerfSpec, 4, prof.Warm, prof.Measure)
	if err != nil {
		t.Log(err)
	}
	t.Logf("4 producer-perf-test processes: %.1f MB/s", run.Stats.RecordsPerSec*recordSize/1e6)
	s.ombGo(ctx, b, sysKafka, 1, 4, false)
	for _, f := range s.res.failures {
		t.Logf("failed: %+v", f)
	}
}

func cpuOf(t *testing.T, pid int) float64 {
	s, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runQueueWait sums the seconds pid's threads spent runnable but not running
// (/proc/PID/task/*/schedstat, second field).
func runQueueWait(pid int) float64 {
	paths, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var ns int64
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var run, wait int64
		if _, err := fmt.Sscan(string(raw), &run, &wait); err == nil {
			ns += wait
		}
	}
	return float64(ns) / 1e9
}
