package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"syscall"

	"sluice/internal/api"
	"sluice/internal/commitlog"
	"sluice/internal/commitlog/metafile"
	"sluice/internal/config"
	"sluice/internal/kafka"
	"sluice/internal/metadata"
	"sluice/internal/vfs"
)

// partitionLogs is the replica manager's LogProvider over the log manager.
type partitionLogs struct {
	cfg  *config.Config
	fsys vfs.FS
	mgr  *commitlog.Manager
}

func newPartitionLogs(cfg *config.Config, fsys vfs.FS, mgr *commitlog.Manager) *partitionLogs {
	return &partitionLogs{cfg: cfg, fsys: fsys, mgr: mgr}
}

// GetOrCreateLog implements replication.LogProvider.
func (p *partitionLogs) GetOrCreateLog(tp kafka.TopicPartition, topicID kafka.UUID, opts commitlog.Options) (*commitlog.Log, error) {
	l, err := p.mgr.GetOrCreate(tp, topicID, opts)
	if err != nil {
		return nil, err
	}
	// A log loaded at start-up was opened with the broker defaults.
	l.SetOptions(opts)
	return l, nil
}

// DeleteLog implements replication.LogProvider.
func (p *partitionLogs) DeleteLog(tp kafka.TopicPartition) error {
	return p.mgr.Delete(tp)
}

// removeStrayLogs deletes loaded logs the image does not assign to this
// broker: partitions of topics deleted (or deleted and recreated) while the
// node was down, whose removal was committed but not carried out.
func (p *partitionLogs) removeStrayLogs(im *metadata.Image, self int32) error {
	var errs []error
	for _, l := range p.mgr.Logs() {
		tp := l.TopicPartition()
		if p.assigned(im, l, self) {
			continue
		}
		if err := p.mgr.Delete(tp); err != nil {
			errs = append(errs, fmt.Errorf("remove stray log %s: %w", tp, err))
		}
	}
	return errors.Join(errs...)
}

func (p *partitionLogs) assigned(im *metadata.Image, l *commitlog.Log, self int32) bool {
	tp := l.TopicPartition()
	t, ok := im.Topic(tp.Topic)
	if !ok {
		return false
	}
	st, ok := t.Partitions[tp.Partition]
	if !ok {
		return false
	}
	id, err := metafile.ReadPartitionMetadata(p.fsys, filepath.Join(l.Dir(), metafile.PartitionMetadataFile))
	if err == nil && id != t.ID {
		return false
	}
	for _, r := range st.Replicas {
		if r == self {
			return true
		}
	}
	return false
}

// describe lists the log dirs and their partition logs (DescribeLogDirs).
func (p *partitionLogs) describe() []api.LogDirDescription {
	offline := map[string]bool{}
	for _, d := range p.mgr.OfflineDirs() {
		offline[d] = true
	}
	dirs := p.cfg.LogDirs()
	out := make([]api.LogDirDescription, 0, len(dirs))
	index := map[string]int{}
	for _, d := range dirs {
		desc := api.LogDirDescription{Path: absPath(d), TotalBytes: -1, UsableBytes: -1}
		if offline[d] {
			desc.Err = commitlog.ErrOffline
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(d, &st); err == nil {
			desc.TotalBytes = int64(st.Blocks) * st.Bsize
			desc.UsableBytes = int64(st.Bavail) * st.Bsize
		}
		index[filepath.Clean(d)] = len(out)
		out = append(out, desc)
	}
	for _, l := range p.mgr.Logs() {
		i, ok := index[filepath.Clean(filepath.Dir(l.Dir()))]
		if !ok || out[i].Err != nil {
			continue
		}
		tp := l.TopicPartition()
		out[i].Partitions = append(out[i].Partitions, api.LogDirPartition{Topic: tp.Topic, Partition: tp.Partition, Size: l.Size()})
	}
	return out
}

func absPath(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
