package node

import (
	"path/filepath"
	"syscall"

	"github.com/sluice-io/sluice/internal/api"
	"github.com/sluice-io/sluice/internal/commitlog"
)

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
	return out
}

func absPath(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		return abs
	}
	return dir
}
