package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"sluice/internal/api"
	"sluice/internal/commitlog"
	"sluice/internal/commitlog/metafile"
	"sluice/internal/config"
	"sluice/internal/kafka"
	"sluice/internal/metadata"
	"sluice/internal/replication"
	"sluice/internal/vfs"
)

// partitionLogs is the replica manager's LogProvider over the log manager:
// logs are opened with their topic's options, and the options follow topic
// config changes without a restart.
type partitionLogs struct {
	cfg   *config.Config
	fsys  vfs.FS
	mgr   *commitlog.Manager
	image func() *metadata.Image

	// topicConfigs caches each topic's resolved configuration; an entry is
	// dropped when the topic's configs change or the topic goes.
	mu struct {
		sync.Mutex
		topicConfigs map[string]config.TopicConfig
	}
}

func newPartitionLogs(cfg *config.Config, fsys vfs.FS, mgr *commitlog.Manager, image func() *metadata.Image) *partitionLogs {
	p := &partitionLogs{cfg: cfg, fsys: fsys, mgr: mgr, image: image}
	p.mu.topicConfigs = map[string]config.TopicConfig{}
	return p
}

// topicConfig resolves a topic's configs over the broker's defaults. Stored
// configs were validated by the controller, so a resolution error means this
// build refuses what an earlier one accepted: the defaults are used and the
// error is returned for logging.
func (p *partitionLogs) topicConfig(topic string) (config.TopicConfig, error) {
	p.mu.Lock()
	t, ok := p.mu.topicConfigs[topic]
	p.mu.Unlock()
	if ok {
		return t, nil
	}
	im := p.image()
	base := p.brokerConfig(im)
	overrides := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceTopic, Name: topic})
	t, err := base.ResolveTopic(overrides)
	if err != nil {
		t, _ = base.ResolveTopic(nil)
		return t, fmt.Errorf("topic %s configs: %w", topic, err)
	}
	p.mu.Lock()
	p.mu.topicConfigs[topic] = t
	p.mu.Unlock()
	return t, nil
}

// brokerConfig is the static configuration with the dynamic broker layers
// of the metadata log (per broker and cluster default) on top: the broker
// synonyms of topic keys (log.retention.ms...) can change at run time.
// Stored values were accepted by the controller; should this build refuse
// them, the static configuration is used.
func (p *partitionLogs) brokerConfig(im *metadata.Image) *config.Config {
	perBroker := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: strconv.Itoa(int(p.cfg.NodeID()))})
	clusterDefault := im.Configs(metadata.ConfigResource{Type: metadata.ConfigResourceBroker, Name: ""})
	if len(perBroker) == 0 && len(clusterDefault) == 0 {
		return p.cfg
	}
	cfg, err := p.cfg.WithDynamic(perBroker, clusterDefault)
	if err != nil {
		return p.cfg
	}
	return cfg
}

// dataPlaneConfig is the replica manager's Options.TopicConfig.
func (p *partitionLogs) dataPlaneConfig(topic string) replication.TopicConfig {
	t, _ := p.topicConfig(topic)
	return dataPlaneTopicConfig(t)
}

// GetOrCreateLog implements replication.LogProvider.
func (p *partitionLogs) GetOrCreateLog(tp kafka.TopicPartition, topicID kafka.UUID) (*commitlog.Log, error) {
	t, _ := p.topicConfig(tp.Topic)
	opts := logOptions(t)
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

// applyConfigChanges gives the open logs of topics whose configs changed
// their new options; it runs on every published delta.
func (p *partitionLogs) applyConfigChanges(delta *metadata.Delta) error {
	var errs []error
	for _, t := range delta.RemovedTopics() {
		p.forget(t.Name)
	}
	changed := map[string]bool{}
	allTopics := false
	for _, res := range delta.ChangedConfigs() {
		switch res.Type {
		case metadata.ConfigResourceTopic:
			changed[res.Name] = true
		case metadata.ConfigResourceBroker:
			// A broker default under every topic's configs changed.
			allTopics = true
		}
	}
	if allTopics {
		p.mu.Lock()
		clear(p.mu.topicConfigs)
		p.mu.Unlock()
	}
	for name := range changed {
		p.forget(name)
	}
	if !allTopics && len(changed) == 0 {
		return nil
	}
	for _, l := range p.mgr.Logs() {
		topic := l.TopicPartition().Topic
		if !allTopics && !changed[topic] {
			continue
		}
		t, err := p.topicConfig(topic)
		if err != nil {
			errs = append(errs, err)
		}
		l.SetOptions(logOptions(t))
	}
	return errors.Join(errs...)
}

func (p *partitionLogs) forget(topic string) {
	p.mu.Lock()
	delete(p.mu.topicConfigs, topic)
	p.mu.Unlock()
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
