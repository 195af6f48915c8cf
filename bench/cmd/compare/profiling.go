package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// profileWorstRow runs one more Sluice session on the profiled server (serve-profiled) with
// the produce configuration whose Sluice/Kafka throughput ratio was lowest, measuring three
// times as long as a normal run, and returns the top of its CPU and allocation profiles.
func (s *suite) profileWorstRow(ctx context.Context, dir string) string {
	spec, why := s.worstProduceSpec()
	cpuPath := filepath.Join(dir, "sluice-cpu.pprof")
	allocPath := filepath.Join(dir, "sluice-allocs.pprof")
	b, err := newProfiledSluiceBroker(s.scratch, cpuPath, allocPath)
	if err != nil {
		return fmt.Sprintf("profiling failed: %v", err)
	}
	s.log.Info("profiling", "spec", spec.label(), "load", load())
	runErr := func() error {
		if err := b.Start(ctx); err != nil {
			return err
		}
		if err := s.warmBroker(ctx, b); err != nil {
			return err
		}
		topic := "perf-" + spec.key()
		if err := createTopic(ctx, b.Bootstrap(), topic, spec.Partitions); err != nil {
			return err
		}
		run, err := runProducerWindows(ctx, s.kafkaRef, b, topic, spec, s.prof.Warm, 3*s.prof.Measure)
		if err != nil {
			return err
		}
		why += fmt.Sprintf(" The profiled run produced %.1f MB/s (the in-process profiler costs a little).", run.Stats.RecordsPerSec*recordSize/1e6)
		return nil
	}()
	// Close sends SIGTERM, which is when the profiles are written.
	closeErr := b.Close()
	if runErr != nil {
		return fmt.Sprintf("profiling failed: %v", runErr)
	}
	if closeErr != nil {
		return fmt.Sprintf("profiling failed at stop: %v", closeErr)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Row profiled: produce, %s. %s\n\n", spec.label(), why)
	for _, p := range []struct {
		title, file string
		args        []string
	}{
		{"CPU (whole session: start-up, topic creation, warm-up and measurement)", cpuPath, []string{"-top", "-nodecount=25"}},
		{"CPU, cumulative", cpuPath, []string{"-top", "-cum", "-nodecount=25"}},
		{"Allocations (bytes allocated over the session, alloc_space)", allocPath, []string{"-top", "-sample_index=alloc_space", "-nodecount=20"}},
	} {
		args := append([]string{"tool", "pprof"}, p.args...)
		args = append(args, p.file)
		top, err := exec.CommandContext(ctx, "go", args...).CombinedOutput()
		fmt.Fprintf(&out, "%s: `go %s`\n\n", p.title, strings.Join(args, " "))
		if err != nil {
			fmt.Fprintf(&out, "    pprof failed: %v\n\n", err)
			continue
		}
		for line := range strings.SplitSeq(strings.TrimRight(string(top), "\n"), "\n") {
			out.WriteString("    " + line + "\n")
		}
		out.WriteString("\n")
	}
	if _, err := os.Stat(cpuPath); err == nil {
		fmt.Fprintf(&out, "Profiles kept in %s (removed with the scratch dir unless --pprof-dir is given).\n", dir)
	}
	return out.String()
}

// worstProduceSpec is the produce configuration with the lowest Sluice/Kafka median ratio.
func (s *suite) worstProduceSpec() (produceSpec, string) {
	worst, worstRatio := latencySpec, 0.0
	found := false
	for _, sp := range produceSpecs {
		sv, okS := s.res.median(produceRow(sp).Key, sysSluice)
		kv, okK := s.res.median(produceRow(sp).Key, sysKafka)
		if !okS || !okK || kv == 0 {
			continue
		}
		if r := sv / kv; !found || r < worstRatio {
			worst, worstRatio, found = sp, r, true
		}
	}
	if !found {
		return latencySpec, "No produce ratios were measured, so the default producer's row was profiled."
	}
	return worst, fmt.Sprintf("It had the lowest Sluice/Kafka median throughput ratio, %.2f.", worstRatio)
}
