package broker

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/metafile"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/vfs"
)

// PartitionLogs is the replica manager's LogProvider over the log manager.
type PartitionLogs struct {
	FS  vfs.FS
	Mgr *commitlog.Manager
}

// GetOrCreateLog implements replication.LogProvider.
func (p PartitionLogs) GetOrCreateLog(tp kafka.TopicPartition, topicID kafka.UUID, opts commitlog.Options) (*commitlog.Log, error) {
	l, err := p.Mgr.GetOrCreate(tp, topicID, opts)
	if err != nil {
		return nil, err
	}
	// A log loaded at start-up was opened with the broker defaults.
	l.SetOptions(opts)
	return l, nil
}

// DeleteLog implements replication.LogProvider.
func (p PartitionLogs) DeleteLog(tp kafka.TopicPartition) error {
	return p.Mgr.Delete(tp)
}

// RemoveStrayLogs deletes loaded logs the image does not assign to broker
// self: partitions of topics deleted (or deleted and recreated) while the
// node was down, whose removal was committed but not carried out.
func (p PartitionLogs) RemoveStrayLogs(im *metadata.Image, self int32) error {
	var errs []error
	for _, l := range p.Mgr.Logs() {
		if p.assigned(im, l, self) {
			continue
		}
		tp := l.TopicPartition()
		if err := p.Mgr.Delete(tp); err != nil {
			errs = append(errs, fmt.Errorf("remove stray log %s: %w", tp, err))
		}
	}
	return errors.Join(errs...)
}

func (p PartitionLogs) assigned(im *metadata.Image, l *commitlog.Log, self int32) bool {
	tp := l.TopicPartition()
	t, ok := im.Topic(tp.Topic)
	if !ok {
		return false
	}
	st, ok := t.Partitions[tp.Partition]
	if !ok {
		return false
	}
	id, err := metafile.ReadPartitionMetadata(p.FS, filepath.Join(l.Dir(), metafile.PartitionMetadataFile))
	if err == nil && id != t.ID {
		return false
	}
	return slices.Contains(st.Replicas, self)
}
