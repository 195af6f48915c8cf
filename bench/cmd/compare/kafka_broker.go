package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// kafkaBroker runs the pinned Apache Kafka through bench/kafka-ref (its JVM flags are those
// of Kafka's start script) with a private state dir, so other engineers' reference brokers
// are never touched. kafka-ref has no restart, so a relaunch re-executes the JVM's own
// command line, read from /proc before the stop, and records the new pid in kafka-ref's
// state so `kafka-ref stop` still ends it. With nodes 3 it is kafka-ref's 3-node quorum of
// combined nodes (replication factor 3 for Kafka's internal topics); only a single broker
// is relaunched.
type kafkaBroker struct {
	kafkaRef  string
	stateDir  string
	nodes     int
	startArgs []string // more `kafka-ref start` arguments (see tls_setup.go)
	bootstrap string
	runDir    string
	argv      []string
	proc      *proc   // node 1
	others    []*proc // nodes 2.., on a cluster
}

func newKafkaBroker(kafkaRef, scratch string) (*kafkaBroker, error) {
	return newKafkaCluster(kafkaRef, scratch, 1)
}

func newKafkaCluster(kafkaRef, scratch string, nodes int) (*kafkaBroker, error) {
	dir, err := os.MkdirTemp(scratch, "kafka-ref-state-")
	if err != nil {
		return nil, fmt.Errorf("kafka-ref state dir: %w", err)
	}
	return &kafkaBroker{kafkaRef: kafkaRef, stateDir: dir, nodes: nodes}, nil
}

func (k *kafkaBroker) System() system    { return sysKafka }
func (k *kafkaBroker) Bootstrap() string { return k.bootstrap }
func (k *kafkaBroker) Nodes() int        { return k.nodes }
func (k *kafkaBroker) DataDir() string   { return filepath.Join(k.runDir, "node1", "data") }

func (k *kafkaBroker) PIDs() []int {
	if k.proc == nil {
		return nil
	}
	pids := []int{k.proc.pid}
	for _, p := range k.others {
		pids = append(pids, p.pid)
	}
	return pids
}

func (k *kafkaBroker) PID() int {
	if k.proc == nil {
		return 0
	}
	return k.proc.pid
}

func (k *kafkaBroker) refCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, k.kafkaRef, args...)
	cmd.Env = append(os.Environ(), "KAFKA_REF_STATE="+k.stateDir)
	return cmd
}

func (k *kafkaBroker) Start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 180*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := k.refCommand(ctx, append([]string{"start", "--nodes", strconv.Itoa(k.nodes)}, k.startArgs...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("kafka-ref start: %w: %s", err, truncate(stderr.String(), 1500))
	}
	lines := strings.Fields(strings.TrimSpace(string(out)))
	if len(lines) == 0 {
		return fmt.Errorf("kafka-ref start printed no bootstrap address")
	}
	k.bootstrap = lines[len(lines)-1]
	runDir, err := os.ReadFile(filepath.Join(k.stateDir, "rundir"))
	if err != nil {
		return fmt.Errorf("kafka-ref run dir: %w", err)
	}
	k.runDir = strings.TrimSpace(string(runDir))
	raw, err := os.ReadFile(filepath.Join(k.stateDir, "pids"))
	if err != nil {
		return fmt.Errorf("kafka-ref pids: %w", err)
	}
	pids, err := parsePIDs(string(raw), k.nodes)
	if err != nil {
		return err
	}
	k.proc, k.others = foreignProc(pids[0]), nil
	for _, pid := range pids[1:] {
		k.others = append(k.others, foreignProc(pid))
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pids[0]))
	if err != nil {
		return fmt.Errorf("kafka command line: %w", err)
	}
	k.argv = strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if k.nodes > 1 {
		return waitBrokers(ctx, k.bootstrap, k.nodes)
	}
	return nil
}

// parsePIDs reads kafka-ref's pids file: one pid per line, node 1 first.
func parsePIDs(raw string, want int) ([]int, error) {
	fields := strings.Fields(raw)
	if len(fields) != want {
		return nil, fmt.Errorf("kafka-ref recorded %d pids, want %d", len(fields), want)
	}
	pids := make([]int, len(fields))
	for i, f := range fields {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("kafka-ref pid %q is not a process id", f)
		}
		pids[i] = pid
	}
	return pids, nil
}

func (k *kafkaBroker) Relaunch() error {
	if len(k.argv) == 0 {
		return fmt.Errorf("kafka: relaunch before start")
	}
	if k.nodes > 1 {
		return fmt.Errorf("kafka: relaunch of one node of a %d-node cluster is not supported", k.nodes)
	}
	p, err := startProc(k.argv, filepath.Join(k.runDir, "node1", "logs", "stdout.log"), nil)
	if err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	k.proc = p
	if err := os.WriteFile(filepath.Join(k.stateDir, "pids"), []byte(strconv.Itoa(p.pid)+"\n"), 0o644); err != nil {
		return fmt.Errorf("record kafka pid for kafka-ref: %w", err)
	}
	return nil
}

func (k *kafkaBroker) Stop(ctx context.Context) error {
	if err := signalTerm(k.proc); err != nil {
		return err
	}
	return k.proc.wait(ctx)
}

func (k *kafkaBroker) Kill(ctx context.Context) error { return k.proc.kill(ctx) }

// Close stops the broker through kafka-ref, which also removes its run dir.
func (k *kafkaBroker) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var err error
	if out, stopErr := k.refCommand(ctx, "stop").CombinedOutput(); stopErr != nil {
		err = fmt.Errorf("kafka-ref stop: %w: %s", stopErr, truncate(string(out), 500))
	}
	if k.proc != nil {
		for _, p := range append([]*proc{k.proc}, k.others...) {
			if p.exited() {
				continue
			}
			if killErr := p.kill(ctx); killErr != nil && err == nil {
				err = killErr
			}
		}
	}
	if rmErr := os.RemoveAll(k.stateDir); rmErr != nil && err == nil {
		err = fmt.Errorf("remove %s: %w", k.stateDir, rmErr)
	}
	return err
}
