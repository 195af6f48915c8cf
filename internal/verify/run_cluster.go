package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/verify/cluster"
	"github.com/sluice-io/sluice/internal/verify/history"
	"github.com/sluice-io/sluice/internal/verify/nemesis"
	"github.com/sluice-io/sluice/internal/verify/workload"
)

// runEnv is the cluster a run works on: one it started (local set) or one
// it was given.
type runEnv struct {
	brokers  []string
	describe string
	target   nemesis.Target
	// local is the cluster the run started, nil for --brokers.
	local *cluster.Cluster
}

// openCluster starts cfg.Nodes local nodes under dir/cluster, or takes
// cfg.Brokers as they are.
func openCluster(ctx context.Context, cfg Config, dir string) (*runEnv, error) {
	if len(cfg.Brokers) > 0 {
		cfg.Log.Info("verify: using the cluster at --brokers (admin-API faults only)", "brokers", strings.Join(cfg.Brokers, ","))
		if err := ping(ctx, cfg); err != nil {
			return nil, err
		}
		return &runEnv{
			brokers:  cfg.Brokers,
			describe: "external: " + strings.Join(cfg.Brokers, ","),
			target:   nemesis.External(cfg.Brokers, cfg.ClientOpts...),
		}, nil
	}
	overrides := map[string]string{
		"default.replication.factor": strconv.Itoa(int(cfg.ReplicationFactor)),
		"min.insync.replicas":        strconv.Itoa(cfg.MinInsyncReplicas),
	}
	for k, v := range cfg.ServerConfig {
		overrides[k] = v
	}
	cdir := filepath.Join(dir, "cluster")
	cfg.Log.Info("verify: starting the cluster", "nodes", cfg.Nodes, "binary", cfg.Binary, "dir", cdir)
	cl, err := cluster.Start(ctx, cluster.Options{Binary: cfg.Binary, Dir: cdir, Nodes: cfg.Nodes,
		Overrides: overrides, Env: cfg.Env, Log: cfg.Log.With("part", "cluster")})
	if err != nil {
		return nil, err
	}
	return &runEnv{
		brokers: cl.BootstrapServers(),
		describe: fmt.Sprintf("%d local nodes, RF %d, min.insync.replicas %d",
			cfg.Nodes, cfg.ReplicationFactor, cfg.MinInsyncReplicas),
		target: cl,
		local:  cl,
	}, nil
}

// nemesis builds the fault schedule: cfg.Faults, or every kind the
// cluster supports; none when cfg.Faults is empty but not nil. It returns
// the schedule in words for the report.
func (e *runEnv) nemesis(cfg Config, rec *history.Recorder) (string, *nemesis.Nemesis, error) {
	supported := nemesis.Supported(e.target)
	kinds := cfg.Faults
	if kinds == nil {
		kinds = supported
	}
	for _, k := range kinds {
		if !slices.Contains(supported, k) {
			return "", nil, fmt.Errorf("fault %q cannot be injected into this cluster (it supports %v)", k, supported)
		}
	}
	if len(kinds) == 0 {
		return "no faults", nil, nil
	}
	s := nemesis.Schedule{Seed: cfg.Seed, Interval: cfg.FaultInterval, Count: cfg.FaultCount, Kinds: kinds, Hold: cfg.FaultHold}
	words := fmt.Sprintf("%v, one every %v", kinds, cfg.FaultInterval)
	if cfg.FaultCount > 0 {
		words += fmt.Sprintf(", %d in all", cfg.FaultCount)
	}
	if cfg.FaultHold > 0 {
		words += fmt.Sprintf(", each held %v", cfg.FaultHold)
	}
	words += fmt.Sprintf(", seed %d", cfg.Seed)
	return words, nemesis.New(e.target, cfg.Topic, s, rec, cfg.Log.With("part", "nemesis"), cfg.ClientOpts...), nil
}

// heal ends every fault the nemesis may have left: cut links, paused,
// stopped or clock-shifted nodes. An external cluster has nothing to heal
// (its admin faults end with the nemesis's run).
func (e *runEnv) heal(log *slog.Logger) error {
	if e.local == nil {
		return nil
	}
	c := e.local
	errs := []error{c.HealAll()}
	for _, id := range c.Nodes() {
		if c.ClockFaults() {
			errs = append(errs, c.JumpClock(id, 0))
		}
		if c.Running(id) {
			errs = append(errs, c.Resume(id))
			continue
		}
		log.Info("verify: heal: restarting node", "node", id)
		errs = append(errs, c.Restart(id))
	}
	return errors.Join(errs...)
}

// close stops the cluster the run started; its dirs and logs stay in the
// results directory.
func (e *runEnv) close(log *slog.Logger) {
	if e.local == nil {
		return
	}
	start := time.Now()
	if err := e.local.Close(); err != nil {
		log.Warn("verify: stopping the cluster", "err", err)
		return
	}
	log.Info("verify: cluster stopped", "took", time.Since(start).Round(time.Millisecond))
}

// pingTimeout bounds the first contact with a cluster given by --brokers.
const pingTimeout = 15 * time.Second

// ping checks that some broker of cfg.Brokers answers, so an unreachable
// cluster fails at once rather than after the topic's retries.
func ping(ctx context.Context, cfg Config) error {
	cl, err := workload.NewClient(cfg.workloadConfig(cfg.Brokers))
	if err != nil {
		return err
	}
	defer cl.Close()
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := cl.Ping(pctx); err != nil {
		return fmt.Errorf("no broker of %s answers: %w", strings.Join(cfg.Brokers, ","), err)
	}
	return nil
}
