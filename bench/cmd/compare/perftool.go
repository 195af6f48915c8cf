package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// recordSize is the value size of every produced record (issue 10: 1 KiB records).
const recordSize = 1024

// produceSpec is one producer configuration of producer-perf-test.
type produceSpec struct {
	AcksAll    bool // acks=all with enable.idempotence=true; otherwise acks=1, not idempotent
	Partitions int
	// Nodes is the size of the cluster produced to (0 or 1: a single broker); on 3 nodes
	// the topic has replication factor 3 and min.insync.replicas 2.
	Nodes int
	// TxnDurationMs > 0 makes the producer transactional (producer-perf-test
	// --transactional-id), committing every TxnDurationMs; it needs AcksAll.
	TxnDurationMs int
	// ClientConfig, when set, is the tool's --command-config (the TLS phase's SSL settings).
	ClientConfig string
	// Compression, when set, is the producer's compression.type (the compression phase).
	Compression string
	// PayloadFile, when set, replaces --record-size: the tool picks each value at random
	// from the file's lines, which are recordSize bytes each (compressible text).
	PayloadFile string
	// KeyRange > 0 keys the records with random integers in [0, KeyRange) (the omb phase);
	// Seed seeds that choice, so several processes do not send the same key sequence.
	KeyRange int
	Seed     int64
	// Props are more producer properties, space-separated (the omb phase's linger.ms and
	// batch.size); a string keeps produceSpec comparable.
	Props string
}

func (p produceSpec) properties() []string {
	props := []string{"acks=1", "enable.idempotence=false"}
	if p.AcksAll {
		props = []string{"acks=all", "enable.idempotence=true"}
	}
	if p.Compression != "" {
		props = append(props, "compression.type="+p.Compression)
	}
	return append(props, strings.Fields(p.Props)...)
}

func (p produceSpec) label() string {
	mode := "acks=1, not idempotent"
	if p.AcksAll {
		mode = "acks=all, idempotent"
	}
	if p.TxnDurationMs > 0 {
		mode = fmt.Sprintf("transactional, a commit every %d ms (producer-perf-test --transactional-id, --transaction-duration-ms %d), %s", p.TxnDurationMs, p.TxnDurationMs, mode)
	}
	unit := "partitions"
	if p.Partitions == 1 {
		unit = "partition"
	}
	out := fmt.Sprintf("%s, %d %s", mode, p.Partitions, unit)
	if p.Compression != "" {
		out += fmt.Sprintf(", compression.type=%s, text values (--payload-file)", p.Compression)
	}
	if p.KeyRange > 0 {
		out += fmt.Sprintf(", random keys in [0, %d)", p.KeyRange)
	}
	return out + nodesLabel(p.Nodes)
}

func (p produceSpec) key() string {
	acks := "acks1"
	if p.AcksAll {
		acks = "acksall"
	}
	if p.TxnDurationMs > 0 {
		acks = fmt.Sprintf("txn%d", p.TxnDurationMs)
	}
	out := fmt.Sprintf("%s-p%d", acks, p.Partitions)
	if p.Compression != "" {
		out += "-" + p.Compression
	}
	if p.KeyRange > 0 {
		out += "-keyed"
	}
	return out + nodesKey(p.Nodes)
}

// nodesLabel and nodesKey extend a row's label and key for a multi-node cluster; a single
// broker's rows keep the names they always had.
func nodesLabel(nodes int) string {
	if nodes <= 1 {
		return ""
	}
	return fmt.Sprintf(", %d nodes, RF=%d, min.insync.replicas=%d", nodes, nodes, clusterMinISR(nodes))
}

func nodesKey(nodes int) string {
	if nodes <= 1 {
		return ""
	}
	return fmt.Sprintf("-%dn", nodes)
}

// clusterMinISR is min.insync.replicas for a topic replicated to every node: 2 on 3 nodes
// (issue 10), 1 on a single broker.
func clusterMinISR(nodes int) int {
	if nodes <= 1 {
		return 1
	}
	return nodes - 1
}

// boundedBuffer keeps the last max bytes written to it: a tool's stderr, for error messages.
type boundedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = b.buf[len(b.buf)-b.max:]
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// toolCommand is `bench/kafka-ref tool NAME ARGS...` in its own process group (kafka-ref
// execs the JVM, so killing the group ends the tool and nothing else).
func toolCommand(ctx context.Context, kafkaRef, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, kafkaRef, append([]string{"tool", name}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// windowedRun is the measured part of a producer-perf-test run at full speed.
type windowedRun struct {
	Stats      windowStats
	CPUSeconds float64 // broker CPU during the measurement windows
}

// runProducerWindows runs producer-perf-test without a rate limit and with one-second
// progress windows: the first warm windows are warm-up, the next measure windows are the
// measurement, then the tool is killed. The broker's CPU time is sampled when the
// warm-up's last line and the measurement's last line arrive.
func runProducerWindows(ctx context.Context, kafkaRef string, b target, topic string, spec produceSpec, warm, measure int) (windowedRun, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(3*(warm+measure)+90)*time.Second)
	defer cancel()
	cmd := toolCommand(ctx, kafkaRef, "producer-perf-test", windowedProducerArgs(b.Bootstrap(), topic, spec)...)
	stderr := &boundedBuffer{max: 4000}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return windowedRun{}, fmt.Errorf("producer-perf-test stdout: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return windowedRun{}, fmt.Errorf("start producer-perf-test: %w", err)
	}
	run, scanErr := scanWindows(stdout, b.PIDs(), warm, measure)
	// The tool runs until killed; its exit status after SIGKILL says nothing.
	cancel()
	_, _ = io.Copy(io.Discard, stdout)
	_ = cmd.Wait()
	if scanErr != nil {
		return windowedRun{}, fmt.Errorf("producer-perf-test %s: %w; stderr: %s", spec.label(), scanErr, truncate(stderr.String(), 1500))
	}
	return run, nil
}

// valueArgs are the tool's arguments for the records' values and keys.
func (p produceSpec) valueArgs() []string {
	args := []string{"--record-size", strconv.Itoa(recordSize)}
	if p.PayloadFile != "" {
		args = []string{"--payload-file", p.PayloadFile}
	}
	if p.KeyRange > 0 {
		args = append(args, "--key-distribution", "random", "--record-key-range", strconv.Itoa(p.KeyRange),
			"--random-seed", strconv.FormatInt(p.Seed, 10))
	}
	return args
}

// windowedProducerArgs are producer-perf-test's arguments for a full-speed run of spec.
func windowedProducerArgs(bootstrap, topic string, spec produceSpec) []string {
	args := []string{
		"--bootstrap-server", bootstrap, "--topic", topic,
		"--num-records", "1000000000000", "--throughput", "-1", "--reporting-interval", "1000",
	}
	args = append(args, spec.valueArgs()...)
	// Before --command-property, which takes every argument up to the next option.
	args = append(args, spec.txnToolArgs(topic)...)
	if spec.ClientConfig != "" {
		args = append(args, "--command-config", spec.ClientConfig)
	}
	args = append(args, "--command-property")
	return append(args, spec.properties()...)
}

func scanWindows(stdout io.Reader, brokerPIDs []int, warm, measure int) (windowedRun, error) {
	var (
		windows []perfWindow
		cpu0    float64
		err     error
	)
	if warm == 0 {
		if cpu0, err = sumCPUSeconds(brokerPIDs); err != nil {
			return windowedRun{}, err
		}
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		w, ok := parseWindow(sc.Text())
		if !ok {
			continue
		}
		windows = append(windows, w)
		switch len(windows) {
		case warm:
			if cpu0, err = sumCPUSeconds(brokerPIDs); err != nil {
				return windowedRun{}, err
			}
		case warm + measure:
			cpu1, err := sumCPUSeconds(brokerPIDs)
			if err != nil {
				return windowedRun{}, err
			}
			st, err := foldWindows(windows[warm:])
			if err != nil {
				return windowedRun{}, err
			}
			return windowedRun{Stats: st, CPUSeconds: cpu1 - cpu0}, nil
		}
	}
	return windowedRun{}, fmt.Errorf("tool ended after %d of %d progress windows", len(windows), warm+measure)
}

// fixedRateRun is a producer-perf-test run throttled to a rate, with the warm-up's records
// excluded from the summary the tool prints.
type fixedRateRun struct {
	Summary    perfSummary
	CPUSeconds float64 // broker CPU over the whole run, warm-up included
	Records    int64   // records over the whole run
}

func runProducerFixedRate(ctx context.Context, kafkaRef string, b target, topic string, spec produceSpec, rate, warm, measure int) (fixedRateRun, error) {
	total := int64(rate) * int64(warm+measure)
	args := []string{
		"--bootstrap-server", b.Bootstrap(), "--topic", topic,
		"--num-records", strconv.FormatInt(total, 10), "--throughput", strconv.Itoa(rate),
		"--record-size", strconv.Itoa(recordSize), "--reporting-interval", "1000",
	}
	if warm > 0 {
		args = append(args, "--warmup-records", strconv.FormatInt(int64(rate)*int64(warm), 10))
	}
	args = append(args, "--command-property")
	args = append(args, spec.properties()...)
	sums, cpu, err := runToCompletion(ctx, kafkaRef, b, time.Duration(3*(warm+measure)+90)*time.Second, args)
	if err != nil {
		return fixedRateRun{}, fmt.Errorf("fixed-rate producer-perf-test: %w", err)
	}
	run := fixedRateRun{CPUSeconds: cpu}
	for _, s := range sums {
		if !s.SteadyState {
			run.Records = s.Records
		}
		if s.SteadyState == (warm > 0) {
			run.Summary = s
		}
	}
	if run.Summary.Records == 0 {
		return fixedRateRun{}, fmt.Errorf("fixed-rate producer-perf-test printed no summary")
	}
	return run, nil
}

// runProducerFill writes n records as fast as the broker takes them (acks=1) and returns
// the tool's summary and the broker CPU it cost.
func runProducerFill(ctx context.Context, kafkaRef string, b target, topic string, n int64) (perfSummary, float64, error) {
	args := []string{
		"--bootstrap-server", b.Bootstrap(), "--topic", topic,
		"--num-records", strconv.FormatInt(n, 10), "--throughput", "-1",
		"--record-size", strconv.Itoa(recordSize), "--reporting-interval", "5000",
		"--command-property",
	}
	args = append(args, produceSpec{}.properties()...)
	sums, cpu, err := runToCompletion(ctx, kafkaRef, b, 15*time.Minute, args)
	if err != nil {
		return perfSummary{}, 0, fmt.Errorf("fill producer-perf-test: %w", err)
	}
	for _, s := range sums {
		if !s.SteadyState {
			return s, cpu, nil
		}
	}
	return perfSummary{}, 0, fmt.Errorf("fill producer-perf-test printed no summary")
}

func runToCompletion(ctx context.Context, kafkaRef string, b target, timeout time.Duration, args []string) ([]perfSummary, float64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cpu0, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return nil, 0, err
	}
	cmd := toolCommand(ctx, kafkaRef, "producer-perf-test", args...)
	var stdout bytes.Buffer
	stderr := &boundedBuffer{max: 4000}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("%w; stderr: %s", err, truncate(stderr.String(), 1500))
	}
	cpu1, err := sumCPUSeconds(b.PIDs())
	if err != nil {
		return nil, 0, err
	}
	var sums []perfSummary
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if s, ok := parseSummary(sc.Text()); ok {
			sums = append(sums, s)
		}
	}
	return sums, cpu1 - cpu0, nil
}
