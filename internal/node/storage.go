package node

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/cleaner"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/records"
)

// storage is the node's log dirs: the log manager and its tasks, the log
// cleaner and the replica manager's view of the partition logs.
type storage struct {
	mgr     *commitlog.Manager
	cleaner *cleaner.Cleaner // nil when log.cleaner.enable is false
	logs    broker.PartitionLogs
	// tasks is the log manager's and cleaner's context, ended at close.
	tasks     context.Context
	stopTasks context.CancelFunc
}

// newStorage loads the partition logs (recovering them after an unclean
// stop) with the broker's log defaults.
func (n *Node) newStorage() (*storage, error) {
	defaults, err := n.cfg.ResolveTopic(nil)
	if err != nil {
		return nil, fmt.Errorf("broker log defaults: %w", err)
	}
	decoder, err := recordsDecoder(n.cfg)
	if err != nil {
		return nil, err
	}
	s := &storage{}
	s.tasks, s.stopTasks = context.WithCancel(context.Background())
	mopts := managerOptions(n.cfg, broker.LogOptions(defaults))
	mopts.Metrics = n.metrics
	mopts.Decoder = decoder
	if s.mgr, err = commitlog.NewManager(n.fsys, mopts, n.clk, n.logger.With("component", "logs")); err != nil {
		return nil, fmt.Errorf("load log dirs: %w", err)
	}
	if n.cfg.Bool(config.LogCleanerEnable) {
		if s.cleaner, err = cleaner.New(n.fsys, s.mgr, cleanerOptions(n.cfg), n.clk, n.metrics, n.logger.With("component", "cleaner")); err != nil {
			s.mgr.Close()
			return nil, fmt.Errorf("log cleaner: %w", err)
		}
	}
	s.logs = broker.PartitionLogs{FS: n.fsys, Mgr: s.mgr}
	n.registerStorageMetrics(s)
	return s, nil
}

// recordsDecoder is the broker's: the per-batch cap on decompressed records
// and sluice.decompression.max.inflight.bytes across every request and
// reader. The Manager gives it to every log, whose reads and Validate use it.
func recordsDecoder(cfg *config.Config) (*records.Decoder, error) {
	size, err := records.BudgetSize(cfg.Raw(config.SluiceDecompressionMaxInflightBytes))
	if err != nil {
		return nil, err
	}
	return records.NewDecoder(records.NewBudget(size), 0), nil
}

// start runs the log manager's tasks (retention, flush, checkpoints) and
// the cleaner.
func (s *storage) start() {
	s.mgr.Start(s.tasks)
	if s.cleaner != nil {
		s.cleaner.Start(s.tasks)
	}
}

// close stops the cleaner (cleans in progress are aborted, never left to
// swap segments of a closed log) and the tasks, then flushes and closes the
// logs, writing the clean-shutdown marker.
func (s *storage) close() error {
	var errs []error
	if s.cleaner != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		if err := s.cleaner.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop log cleaner: %w", err))
		}
		cancel()
	}
	s.stopTasks()
	if err := s.mgr.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
