package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"
)

// perfProc is one producer-perf-test process of a multi-process run and the progress
// windows it has printed so far.
type perfProc struct {
	cmd    *exec.Cmd
	stderr *boundedBuffer
	mu     sync.Mutex
	wins   []perfWindow
	ended  bool
}

func (p *perfProc) scan(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if w, ok := parseWindow(sc.Text()); ok {
			p.mu.Lock()
			p.wins = append(p.wins, w)
			p.mu.Unlock()
		}
	}
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
}

func (p *perfProc) state() (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.wins), p.ended
}

// runProducersWindows runs procs producer-perf-test processes at full speed to one topic
// (several producers, as the OpenMessaging Benchmark's; each process one producer, with a
// seed of its own for the keys). Once every process has printed warm progress windows the
// measurement starts; it lasts measure seconds of wall time, the broker's CPU sampled at
// both ends, then the tools are killed. The throughput is the sum of each process's rate
// over the windows it printed in the measurement (foldProcWindows).
func runProducersWindows(ctx context.Context, kafkaRef string, b target, topic string, spec produceSpec, procs, warm, measure int) (windowedRun, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(3*(warm+measure)+120)*time.Second)
	defer cancel()
	ps := make([]*perfProc, 0, procs)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
		for _, p := range ps {
			_ = p.cmd.Wait()
		}
	}()
	for i := range procs {
		sp := spec
		sp.Seed = int64(i + 1)
		p := &perfProc{cmd: toolCommand(ctx, kafkaRef, "producer-perf-test", windowedProducerArgs(b.Bootstrap(), topic, sp)...), stderr: &boundedBuffer{max: 2000}}
		p.cmd.Stderr = p.stderr
		stdout, err := p.cmd.StdoutPipe()
		if err != nil {
			return windowedRun{}, fmt.Errorf("producer-perf-test stdout: %w", err)
		}
		if err := p.cmd.Start(); err != nil {
			return windowedRun{}, fmt.Errorf("start producer-perf-test: %w", err)
		}
		ps = append(ps, p)
		wg.Add(1)
		go func() { defer wg.Done(); p.scan(stdout) }()
	}
	marks0, err := waitWindows(ctx, ps, warm)
	if err != nil {
		return windowedRun{}, err
	}
	cpu0, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return windowedRun{}, err
	}
	t0 := time.Now()
	if err := sleepCtx(ctx, time.Duration(measure)*time.Second); err != nil {
		return windowedRun{}, err
	}
	cpu1, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return windowedRun{}, err
	}
	wall := time.Since(t0).Seconds()
	spans := make([][]perfWindow, len(ps))
	for i, p := range ps {
		p.mu.Lock()
		spans[i] = append([]perfWindow(nil), p.wins[marks0[i]:]...)
		p.mu.Unlock()
	}
	rate, err := foldProcWindows(spans)
	if err != nil {
		return windowedRun{}, fmt.Errorf("%d producer-perf-test processes, %s: %w; stderr of the first: %s", procs, spec.label(), err, truncate(ps[0].stderr.String(), 1000))
	}
	records := int64(rate * wall)
	return windowedRun{Stats: windowStats{Records: records, Seconds: wall, RecordsPerSec: rate}, CPUSeconds: cpu1 - cpu0}, nil
}

// waitWindows waits until every process has printed at least n windows and returns how
// many each had then; a process that ends first fails the run.
func waitWindows(ctx context.Context, ps []*perfProc, n int) ([]int, error) {
	for {
		marks := make([]int, len(ps))
		ready := true
		for i, p := range ps {
			got, ended := p.state()
			if ended {
				return nil, fmt.Errorf("producer-perf-test %d ended after %d progress windows; stderr: %s", i+1, got, truncate(p.stderr.String(), 1500))
			}
			marks[i] = got
			ready = ready && got >= n
		}
		if ready {
			return marks, nil
		}
		if err := sleepCtx(ctx, 50*time.Millisecond); err != nil {
			return nil, fmt.Errorf("waiting for %d warm-up windows from each producer-perf-test: %w", n, err)
		}
	}
}

// foldProcWindows sums the processes' rates, each over the windows it printed in the
// measurement (their own durations); every process must have printed one, or it stalled.
func foldProcWindows(spans [][]perfWindow) (float64, error) {
	if len(spans) == 0 {
		return 0, fmt.Errorf("no processes")
	}
	var rate float64
	for i, ws := range spans {
		st, err := foldWindows(ws)
		if err != nil {
			return 0, fmt.Errorf("process %d: %w", i+1, err)
		}
		rate += st.RecordsPerSec
	}
	return rate, nil
}
