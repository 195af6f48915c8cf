package verify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/sluice-io/sluice/internal/verify/history"
	"github.com/sluice-io/sluice/internal/verify/nemesis"
	"github.com/sluice-io/sluice/internal/verify/workload"
)

// progressEvery is how often the run logs its throughput.
const progressEvery = 10 * time.Second

// workloadFunc is a workload: it runs until ctx is done.
type workloadFunc func(context.Context, workload.Config, *history.Recorder) error

// workloads maps Config.Workload to its function.
var workloads = map[string]workloadFunc{
	WorkloadQueue: workload.Queue,
	WorkloadGroup: workload.Group,
	WorkloadTxn:   workload.Txn,
}

// runPhase runs the workload and the nemesis together. The workload stops
// after cfg.Duration, or cfg.Quiet after the nemesis has injected its
// cfg.FaultCount faults, whichever comes first. An error means the phase
// did not run as asked (the workload failed, the nemesis could not inject
// or heal a fault, the run was interrupted).
func runPhase(ctx context.Context, cfg Config, wcfg workload.Config, rec *history.Recorder, nem *nemesis.Nemesis, counts *opCounter) error {
	wctx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	log := cfg.Log
	log.Info("verify: workload running", "workload", cfg.Workload, "duration", cfg.Duration,
		"producers", wcfg.Producers, "consumers", wcfg.Consumers, "rate", wcfg.Rate)
	wdone := make(chan error, 1)
	go func() { wdone <- workloads[cfg.Workload](wctx, wcfg, rec) }()
	ndone := make(chan error, 1)
	if nem != nil {
		go func() { ndone <- nem.Run(wctx) }()
	}
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	prog := progress{start: time.Now(), last: time.Now()}
	var nemErr error
	for {
		select {
		case err := <-wdone:
			if nem != nil && ndone != nil {
				stop()
				if e := <-ndone; e != nil && !isStop(e) {
					nemErr = e
				}
			}
			return phaseResult(ctx, wctx, err, nemErr)
		case err := <-ndone:
			ndone = nil
			if err != nil && !isStop(err) {
				nemErr = fmt.Errorf("nemesis: %w", err)
				log.Error("verify: the nemesis failed; stopping the workload", "err", err)
				stop()
				continue
			}
			if wctx.Err() == nil {
				log.Info("verify: every fault injected; the workload stops after a quiet tail",
					"faults", faultsText(nem.Counts()), "tail", cfg.Quiet)
				time.AfterFunc(cfg.Quiet, stop)
			}
		case <-tick.C:
			prog.log(log, counts, nem)
		}
	}
}

// phaseResult turns how the workload and nemesis ended into the phase's
// error: none when they stopped because their time was up.
func phaseResult(ctx, wctx context.Context, werr, nemErr error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	if werr != nil && !(isStop(werr) && wctx.Err() != nil) {
		return errors.Join(fmt.Errorf("workload: %w", werr), nemErr)
	}
	return nemErr
}

// isStop reports whether err is only a context ending.
func isStop(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// progress logs throughput every progressEvery.
type progress struct {
	start, last time.Time
	prev        opCounts
}

func (p *progress) log(log *slog.Logger, counts *opCounter, nem *nemesis.Nemesis) {
	now := time.Now()
	cur := counts.snapshot()
	secs := now.Sub(p.last).Seconds()
	faults := "none"
	if nem != nil {
		faults = faultsText(nem.Counts())
	}
	log.Info("verify: progress",
		"elapsed", now.Sub(p.start).Round(time.Second),
		"acks/s", int((float64(cur.acks-p.prev.acks))/secs),
		"polls/s", int((float64(cur.polls-p.prev.polls))/secs),
		"acks", cur.acks, "failed", cur.fails, "unknown", cur.infos, "faults", faults)
	p.prev, p.last = cur, now
}

// faultsText is "kill 3, pause 1", kinds sorted, or "none".
func faultsText(m map[nemesis.Kind]int) string {
	var parts []string
	for k, n := range m {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
