package node

// The broker's log dirs for the admin APIs: DescribeLogDirs lists them
// with their logs (current and future), AlterReplicaLogDirs moves a log
// between them (commitlog.Manager.AlterLogDir, KIP-113).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
)

// haltNode ends the process at once, as Kafka's Exit.halt(1); a variable
// so a test sees the decision instead.
var haltNode = func() { os.Exit(1) }

// watchLogDirs halts the node when a log dir failure leaves it nothing to
// serve or takes the metadata log with it, as Kafka's broker does
// (LogManager.handleLogDirFailure, ReplicaManager.handleLogDirFailure): the
// controller then fences it and moves its leadership after
// broker.session.timeout.ms. A broker with another dir online keeps
// serving it and names the failed dir in its next heartbeat, and the
// controller moves the leadership of that dir's partitions
// (logdirs_assign.go, KIP-858; in clusters bootstrapped before directory
// assignment, their leadership stays until the broker restarts).
func (n *Node) watchLogDirs() {
	metaDir := filepath.Clean(metadataLogDir(n.cfg))
	dirs := n.cfg.LogDirs()
	n.storage.mgr.SetDirOfflineHandler(func(dir string, online int) {
		if msg := logDirFailureFatal(dir, online, metaDir, dirs); msg != "" {
			n.logger.Error(msg)
			if n.halt != nil { // an embedding's node, in a process it does not own
				n.halt()
				return
			}
			haltNode()
		}
	})
}

// logDirFailureFatal is Kafka's message for a dir failure that halts the
// broker, or "" when it may go on serving its other dirs.
func logDirFailureFatal(dir string, online int, metaDir string, dirs []string) string {
	switch {
	case online == 0:
		return fmt.Sprintf("Shutdown broker because all log dirs in %s have failed", strings.Join(dirs, ", "))
	case filepath.Clean(dir) == metaDir:
		return fmt.Sprintf("Shutdown broker because the metadata log dir %s has failed", dir)
	}
	return ""
}

// AlterReplicaLogDir implements api.LogDirMover, mapping the Manager's
// errors as Kafka's ReplicaManager.alterReplicaLogDirs does.
func (l logDirs) AlterReplicaLogDir(topic string, partition int32, dir string) *kerr.Error {
	tp := kafka.TopicPartition{Topic: topic, Partition: partition}
	// Kafka: UnifiedLog.logFutureDirName(tp).length > 255 (KAFKA-4893).
	if len(tp.String())+len(".-future")+32 > 255 {
		return kerr.InvalidTopicException
	}
	err := l.n.storage.mgr.AlterLogDir(tp, dir)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, commitlog.ErrLogDirNotFound):
		return kerr.LogDirNotFound
	case errors.Is(err, commitlog.ErrOffline), errors.Is(err, commitlog.ErrStorage):
		return kerr.KafkaStorageError
	case errors.Is(err, commitlog.ErrNoReplica):
		// Kafka: NOT_LEADER_OR_FOLLOWER, answered REPLICA_NOT_AVAILABLE
		// here, for a partition the metadata knows; else unknown.
		if t, ok := l.n.Image().Topic(topic); ok {
			if _, ok := t.Partitions[partition]; ok {
				return kerr.ReplicaNotAvailable
			}
		}
		return kerr.UnknownTopicOrPartition
	}
	l.n.logger.Error("error while changing replica dir", "partition", tp.String(), "dir", dir, "err", err)
	return kerr.UnknownServerError
}

// describe lists the log dirs and their partition logs (DescribeLogDirs).
func (s *storage) describe(dirs []string) []api.LogDirDescription {
	offline := map[string]bool{}
	for _, d := range s.mgr.OfflineDirs() {
		offline[d] = true
	}
	out := make([]api.LogDirDescription, 0, len(dirs))
	index := map[string]int{}
	for _, d := range dirs {
		desc := api.LogDirDescription{Path: absPath(d), TotalBytes: -1, UsableBytes: -1}
		if offline[d] {
			desc.Err = commitlog.ErrOffline
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			desc.TotalBytes = int64(st.Blocks) * int64(st.Bsize) // Bsize is uint32 on darwin
			desc.UsableBytes = int64(st.Bavail) * int64(st.Bsize)
		}
		index[filepath.Clean(d)] = len(out)
		out = append(out, desc)
	}
	for _, l := range s.mgr.Logs() {
		i, ok := index[filepath.Clean(filepath.Dir(l.Dir()))]
		if !ok || out[i].Err != nil {
			continue
		}
		tp := l.TopicPartition()
		out[i].Partitions = append(out[i].Partitions, api.LogDirPartition{Topic: tp.Topic, Partition: tp.Partition, Size: l.Size()})
	}
	for _, f := range s.mgr.FutureLogs() {
		i, ok := index[filepath.Clean(f.Dir)]
		if !ok || out[i].Err != nil {
			continue
		}
		tp := f.Log.TopicPartition()
		out[i].Partitions = append(out[i].Partitions, api.LogDirPartition{Topic: tp.Topic, Partition: tp.Partition,
			Size: f.Log.Size(), OffsetLag: f.Lag, IsFuture: true})
	}
	return out
}

func absPath(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
