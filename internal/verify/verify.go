// Package verify is `sluice verify`: it starts a cluster of local sluice
// processes (or takes an existing one), runs a workload against it while
// the nemesis injects faults, heals the cluster, reads every partition
// back, checks the history for the anomalies Jepsen's Kafka analyses name
// and writes the report. The parts live in its subpackages (history,
// workload, nemesis, cluster, checker, report); Run composes them.
//
// A run that could not complete (the cluster did not start, the final
// read did not reach every high watermark) is an error, never a verdict:
// a history without its final read would show acknowledged writes as
// lost.
package verify

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/nemesis"
)

// The workloads Config.Workload names.
const (
	WorkloadQueue = "queue"
	WorkloadGroup = "group"
	WorkloadTxn   = "txn"
)

// Workloads lists the workload names, for flags' help and checks.
var Workloads = []string{WorkloadQueue, WorkloadGroup, WorkloadTxn}

// ErrIncomplete marks a run that could not complete; it has no verdict.
var ErrIncomplete = errors.New("verify run incomplete")

// Config is one run of `sluice verify`. Zero fields take the defaults
// withDefaults names.
type Config struct {
	// Brokers, when set, is an existing cluster: nothing is started, only
	// the faults an admin client can cause are injected.
	Brokers []string
	// Nodes is the number of local sluice processes to start (default 3).
	Nodes int
	// Binary is the sluice executable to start (required without
	// Brokers); Env is added to its environment (SLUICE_BUG for the
	// planted-bug builds); ServerConfig overrides its properties.
	Binary       string
	Env          []string
	ServerConfig map[string]string

	// Topic (default "verify-<the run directory's name>", new for every
	// run: a topic holding an earlier run's values, or a group holding its
	// offsets, would show them as anomalies) is created with Partitions
	// (default 6),
	// ReplicationFactor (default 3, at most Nodes) and
	// MinInsyncReplicas (default 2, at most the replication factor).
	Topic             string
	Partitions        int32
	ReplicationFactor int16
	MinInsyncReplicas int

	// Workload is queue, group or txn (default queue); Producers,
	// Consumers and Rate (sends per second over all producers) shape it.
	Workload             string
	Producers, Consumers int
	Rate                 int

	// Duration bounds the workload (default 60 s); it stops earlier, a
	// Quiet tail (default 5 s) after the nemesis injected FaultCount
	// faults, when FaultCount is set.
	Duration time.Duration
	Quiet    time.Duration

	// Faults are the fault kinds to inject (nil: every kind the cluster
	// supports; empty but not nil: none); each comes after FaultInterval
	// (default 5 s) of quiet, held for
	// FaultHold (default: the nemesis's), FaultCount in all (0: until
	// Duration). Seed drives the schedule (0: from the clock).
	Faults        []nemesis.Kind
	FaultInterval time.Duration
	FaultHold     time.Duration
	FaultCount    int
	Seed          int64

	// Results is the directory each run's own directory is made in
	// (default "verify-results").
	Results string
	// Command is the command line, for the report.
	Command string
	// ClientOpts go to every client (TLS, SASL).
	ClientOpts []kgo.Opt
	Log        *slog.Logger
}

// withDefaults fills the zero fields.
func (c Config) withDefaults() Config {
	if c.Nodes <= 0 {
		c.Nodes = 3
	}
	if c.Partitions <= 0 {
		c.Partitions = 6
	}
	if c.ReplicationFactor <= 0 {
		c.ReplicationFactor = 3
	}
	if c.MinInsyncReplicas <= 0 {
		c.MinInsyncReplicas = 2
	}
	if c.Workload == "" {
		c.Workload = WorkloadQueue
	}
	if c.Duration <= 0 {
		c.Duration = 60 * time.Second
	}
	if c.Quiet <= 0 {
		c.Quiet = 5 * time.Second
	}
	if c.FaultInterval <= 0 {
		c.FaultInterval = 5 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = time.Now().UnixNano()
	}
	if c.Results == "" {
		c.Results = "verify-results"
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// validate refuses a config no run can honour.
func (c Config) validate() error {
	if !slices.Contains(Workloads, c.Workload) {
		return fmt.Errorf("workload %q: want one of %v", c.Workload, Workloads)
	}
	if _, ok := workloads[c.Workload]; !ok {
		return fmt.Errorf("workload %q is not available in this build yet", c.Workload)
	}
	if len(c.Brokers) == 0 {
		if c.Binary == "" {
			return errors.New("no sluice binary to start a cluster with")
		}
		if int(c.ReplicationFactor) > c.Nodes {
			return fmt.Errorf("replication factor %d is above the %d nodes", c.ReplicationFactor, c.Nodes)
		}
	}
	if c.MinInsyncReplicas > int(c.ReplicationFactor) {
		return fmt.Errorf("min.insync.replicas %d is above the replication factor %d (every acks=all send would fail)",
			c.MinInsyncReplicas, c.ReplicationFactor)
	}
	if c.FaultCount < 0 || c.Producers < 0 || c.Consumers < 0 || c.Rate < 0 {
		return errors.New("counts and rates must not be negative")
	}
	return nil
}
