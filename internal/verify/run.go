package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/sluice-io/sluice/internal/verify/checker"
	"github.com/sluice-io/sluice/internal/verify/history"
	"github.com/sluice-io/sluice/internal/verify/report"
	"github.com/sluice-io/sluice/internal/verify/workload"
)

// Bounds on the phases around the workload.
const (
	// setupTimeout bounds creating the topic.
	setupTimeout = 2 * time.Minute
	// finalTimeout bounds healing and the final read: every partition
	// must have a leader again and be read to its high watermark.
	finalTimeout = 3 * time.Minute
)

// Run runs one verification as cfg says, writes its results under
// cfg.Results and the summary table to out, and returns the checked
// history. An error (wrapping ErrIncomplete) means the run could not
// complete and has no verdict.
func Run(ctx context.Context, cfg Config, out io.Writer) (checker.Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return checker.Result{}, err
	}
	started := time.Now()
	dir, err := makeRunDir(cfg.Results, cfg.Workload, started)
	if err != nil {
		return checker.Result{}, err
	}
	if cfg.Topic == "" {
		cfg.Topic = "verify-" + filepath.Base(dir)
	}
	log := cfg.Log
	log.Info("verify: starting", "workload", cfg.Workload, "seed", cfg.Seed, "topic", cfg.Topic, "results", dir)
	env, err := openCluster(ctx, cfg, dir)
	if err != nil {
		return checker.Result{}, incomplete("starting the cluster", err)
	}
	defer env.close(log)

	wcfg := cfg.workloadConfig(env.brokers)
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	err = workload.CreateTopic(sctx, wcfg)
	cancel()
	if err != nil {
		return checker.Result{}, incomplete("creating topic "+cfg.Topic, err)
	}
	hf, err := os.Create(filepath.Join(dir, report.HistoryFile))
	if err != nil {
		return checker.Result{}, fmt.Errorf("history file: %w", err)
	}
	defer hf.Close()
	counts := &opCounter{}
	rec := history.NewRecorder(time.Now, counts.wrap(hf))
	// An incomplete run's history is written too, for a look at what
	// happened (a complete one is flushed before the check).
	defer rec.Flush()

	sched, nem, err := env.nemesis(cfg, rec)
	if err != nil {
		return checker.Result{}, err
	}
	if err := runPhase(ctx, cfg, wcfg, rec, nem, counts); err != nil {
		return checker.Result{}, incomplete("running the workload", err)
	}
	if err := finish(ctx, env, wcfg, rec); err != nil {
		return checker.Result{}, err
	}
	if err := rec.Flush(); err != nil {
		return checker.Result{}, err
	}
	ops := rec.Ops()
	log.Info("verify: checking the history", "ops", len(ops))
	res := checker.Check(ops)
	meta := report.Meta{Command: cfg.Command, Workload: cfg.Workload, Seed: cfg.Seed, Cluster: env.describe,
		Started: started.UTC(), Duration: time.Since(started), Schedule: sched}
	sum, err := report.Write(dir, meta, ops, res)
	if err != nil {
		return res, fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprint(out, sum.Text())
	return res, nil
}

// finish heals the cluster and reads every partition back to its high
// watermark; without that read there is no verdict.
func finish(ctx context.Context, env *runEnv, wcfg workload.Config, rec *history.Recorder) error {
	fctx, cancel := context.WithTimeout(ctx, finalTimeout)
	defer cancel()
	if err := env.heal(wcfg.Log); err != nil {
		return incomplete("healing the cluster", err)
	}
	wcfg.Log.Info("verify: final read of every partition")
	if err := workload.FinalRead(fctx, wcfg, rec); err != nil {
		return incomplete("final read", err)
	}
	return nil
}

// incomplete wraps err as a run without a verdict.
func incomplete(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrIncomplete, what, err)
}

// makeRunDir makes <results>/<workload>-<UTC time>/, with a suffix when
// a run started in the same second.
func makeRunDir(results, name string, t time.Time) (string, error) {
	base := filepath.Join(results, name+"-"+t.UTC().Format("20060102T150405Z"))
	dir := base
	for i := 2; ; i++ {
		err := os.MkdirAll(filepath.Dir(dir), 0o755)
		if err == nil {
			err = os.Mkdir(dir, 0o755)
		}
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, os.ErrExist) || i > 100 {
			return "", fmt.Errorf("results directory: %w", err)
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// workloadConfig is the workload's share of cfg.
func (c Config) workloadConfig(brokers []string) workload.Config {
	return workload.Config{
		Brokers: brokers, Topic: c.Topic, Partitions: c.Partitions,
		ReplicationFactor: c.ReplicationFactor, MinInsyncReplicas: c.MinInsyncReplicas,
		Producers: c.Producers, Consumers: c.Consumers, Rate: c.Rate,
		ClientOpts: c.ClientOpts, Log: c.Log, Seed: c.Seed,
	}
}
