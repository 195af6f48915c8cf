package replication

// The replication-offset-checkpoint file (Kafka's ReplicaManager
// highWatermarkCheckpoints): each log dir keeps the high watermarks of the
// partitions whose log it holds, written every
// replica.high.watermark.checkpoint.interval.ms and at a clean stop, and
// read when the broker starts, so a leader whose followers have not fetched
// yet serves the high watermark it had instead of its log start offset.

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/sluice-io/sluice/internal/commitlog/checkpoint"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/vfs"
)

// HighWatermarksByDir groups the hosted partitions' high watermarks by the
// log dir holding their log.
func (rm *ReplicaManager) HighWatermarksByDir() map[string]map[kafka.TopicPartition]int64 {
	out := map[string]map[kafka.TopicPartition]int64{}
	for _, p := range rm.Partitions() {
		dir := filepath.Dir(p.log.Dir())
		if out[dir] == nil {
			out[dir] = map[kafka.TopicPartition]int64{}
		}
		out[dir][p.tp] = p.HighWatermark()
	}
	return out
}

// WriteHighWatermarkCheckpoints writes the replication-offset-checkpoint of
// each of dirs (the online log dirs) with the high watermarks byDir gives
// it; a dir without partitions gets an empty file, so a partition that left
// it is not restored from a stale line.
func WriteHighWatermarkCheckpoints(fsys vfs.FS, dirs []string, byDir map[string]map[kafka.TopicPartition]int64) error {
	var errs []error
	for _, d := range dirs {
		hws := byDir[filepath.Clean(d)]
		if hws == nil {
			hws = map[kafka.TopicPartition]int64{}
		}
		if err := checkpoint.Write(fsys, filepath.Join(d, checkpoint.ReplicationFile), hws); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ReadHighWatermarkCheckpoints reads the replication-offset-checkpoint of
// each of dirs. A missing file is empty, as Kafka treats it; a malformed one
// is skipped and reported in the error, while the other dirs' values are
// still returned (a partition then starts from its log start offset).
func ReadHighWatermarkCheckpoints(fsys vfs.FS, dirs []string) (map[kafka.TopicPartition]int64, error) {
	out := map[kafka.TopicPartition]int64{}
	var errs []error
	for _, d := range slices.Sorted(slices.Values(dirs)) {
		hws, err := checkpoint.Read(fsys, filepath.Join(d, checkpoint.ReplicationFile))
		switch {
		case vfs.IsNotExist(err):
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("high watermarks of %s: %w", d, err))
			continue
		}
		maps.Copy(out, hws)
	}
	return out, errors.Join(errs...)
}

// CheckpointedHighWatermarks is a HighWatermarkSource over the values read
// at start-up.
type CheckpointedHighWatermarks map[kafka.TopicPartition]int64

// CheckpointedHighWatermark implements HighWatermarkSource.
func (c CheckpointedHighWatermarks) CheckpointedHighWatermark(tp kafka.TopicPartition) (int64, bool) {
	hw, ok := c[tp]
	return hw, ok
}
