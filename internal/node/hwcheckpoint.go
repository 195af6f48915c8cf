package node

// The replication-offset-checkpoint files (replication/hwcheckpoint.go):
// read before the replica manager opens its first partition, written every
// replica.high.watermark.checkpoint.interval.ms and once more at a clean
// stop, after the replica manager stopped and before the logs close.

import (
	"path/filepath"
	"slices"
	"sync"

	"github.com/sluice-io/sluice/internal/broker"
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/replication"
)

// hwLogs is the replica manager's LogProvider with the high watermarks
// checkpointed at the last stop.
type hwLogs struct {
	broker.PartitionLogs
	replication.CheckpointedHighWatermarks
}

// hwCheckpointer writes the high watermark checkpoints periodically.
type hwCheckpointer struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// checkpointedLogs reads the log dirs' high watermark checkpoints and wraps
// the partition logs with them; an unreadable file is logged and its dir's
// partitions start from their log start offsets, as Kafka does.
func (n *Node) checkpointedLogs() replication.LogProvider {
	hws, err := replication.ReadHighWatermarkCheckpoints(n.fsys, n.cfg.LogDirs())
	if err != nil {
		n.logger.Warn("ignoring unreadable high watermark checkpoints", "err", err)
	}
	return hwLogs{PartitionLogs: n.storage.logs, CheckpointedHighWatermarks: hws}
}

// onlineLogDirs are the log dirs not marked offline, cleaned.
func (n *Node) onlineLogDirs() []string {
	offline := n.storage.mgr.OfflineDirs()
	var out []string
	for _, d := range n.cfg.LogDirs() {
		if !slices.Contains(offline, d) {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// checkpointHighWatermarks writes every online log dir's
// replication-offset-checkpoint.
func (n *Node) checkpointHighWatermarks() error {
	if n.broker == nil || n.broker.replicas == nil || n.storage == nil {
		return nil
	}
	return replication.WriteHighWatermarkCheckpoints(n.fsys, n.onlineLogDirs(), n.broker.replicas.HighWatermarksByDir())
}

// startHighWatermarkCheckpoints runs the periodic checkpoint on the node's
// clock.
func (n *Node) startHighWatermarkCheckpoints() {
	c := &hwCheckpointer{stop: make(chan struct{}), done: make(chan struct{})}
	n.hwCheckpoints = c
	interval := n.cfg.Duration(config.ReplicaHighWatermarkCheckpointIntervalMs)
	go func() {
		defer close(c.done)
		ticker := n.clk.NewTicker(interval)
		defer ticker.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-ticker.C():
				if err := n.checkpointHighWatermarks(); err != nil {
					n.logger.Warn("high watermark checkpoint failed", "err", err)
				}
			}
		}
	}()
}

// stopHighWatermarkCheckpoints ends the periodic checkpoint and writes the
// last one (Kafka's ReplicaManager.shutdown(checkpointHW = true)).
func (n *Node) stopHighWatermarkCheckpoints() error {
	c := n.hwCheckpoints
	if c == nil {
		return nil
	}
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return n.checkpointHighWatermarks()
}
