package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// profileWorstRow runs one more Sluice session with its debug listener
// (sluice.debug.listener, which serves net/http/pprof) on the produce configuration whose
// Sluice/Kafka throughput ratio was lowest, measuring three times as long as a normal run,
// and returns the top of a CPU profile taken during that run and of the allocation profile
// after it.
func (s *suite) profileWorstRow(ctx context.Context, dir string) string {
	spec, why := s.worstProduceSpec()
	cpuPath := filepath.Join(dir, "sluice-cpu.pprof")
	allocPath := filepath.Join(dir, "sluice-allocs.pprof")
	b, err := newSluiceBroker(s.sluiceBin, s.scratch)
	if err != nil {
		return fmt.Sprintf("profiling failed: %v", err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			s.log.Warn("closing profiled broker", "err", err)
		}
	}()
	debugURL, err := b.withDebugListener()
	if err != nil {
		return fmt.Sprintf("profiling failed: %v", err)
	}
	s.log.Info("profiling", "spec", spec.label(), "load", load())
	if err := b.Start(ctx); err != nil {
		return fmt.Sprintf("profiling failed: %v", err)
	}
	if err := s.warmBroker(ctx, b); err != nil {
		return fmt.Sprintf("profiling failed: %v", err)
	}
	topic := "perf-" + spec.key()
	if err := createTopic(ctx, b, topic, spec.Partitions); err != nil {
		return fmt.Sprintf("profiling failed: %v", err)
	}
	measure := 3 * s.prof.Measure
	// The CPU profile covers the tool's start-up and warm-up windows too; they are short
	// next to the measurement.
	profileSecs := s.prof.Warm + measure + 1
	cpuDone := make(chan error, 1)
	go func() {
		cpuDone <- fetchProfile(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", debugURL, profileSecs), cpuPath, time.Duration(profileSecs+30)*time.Second)
	}()
	run, runErr := runProducerWindows(ctx, s.kafkaRef, b, topic, spec, s.prof.Warm, measure)
	cpuErr := <-cpuDone
	if runErr != nil {
		return fmt.Sprintf("profiling failed: %v", runErr)
	}
	if cpuErr != nil {
		return fmt.Sprintf("profiling failed: %v", cpuErr)
	}
	if err := fetchProfile(ctx, debugURL+"/debug/pprof/allocs", allocPath, 30*time.Second); err != nil {
		return fmt.Sprintf("profiling failed: %v", err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "Row profiled: produce, %s. %s The profiled run produced %.1f MB/s.\n\n",
		spec.label(), why, run.Stats.RecordsPerSec*recordSize/1e6)
	for _, p := range []struct {
		title, file string
		args        []string
	}{
		{fmt.Sprintf("CPU, %d s from the tool's start (its warm-up and measurement windows)", profileSecs), cpuPath, []string{"-top", "-nodecount=25"}},
		{"CPU, cumulative", cpuPath, []string{"-top", "-cum", "-nodecount=25"}},
		{"Allocations since the broker started (warm-up included), alloc_space", allocPath, []string{"-top", "-sample_index=alloc_space", "-nodecount=20"}},
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
	fmt.Fprintf(&out, "Profiles kept in %s (removed with the scratch dir unless --pprof-dir is given).\n", dir)
	return out.String()
}

// fetchProfile saves what a pprof HTTP endpoint returns.
func fetchProfile(ctx context.Context, url, path string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("pprof request: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("profile file: %w", err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return fmt.Errorf("save %s: %w", url, err)
	}
	return f.Close()
}

// worstProduceSpec is the single-broker produce configuration, plain or transactional,
// with the lowest Sluice/Kafka median ratio among those measured.
func (s *suite) worstProduceSpec() (produceSpec, string) {
	worst, worstRatio := latencySpec, 0.0
	found := false
	for _, sp := range append(slices.Clone(produceSpecs), txnProduceSpecs(1)...) {
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
