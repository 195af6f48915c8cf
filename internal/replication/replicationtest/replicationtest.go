// Package replicationtest builds real ReplicaManagers for tests of this and
// other packages: logs in an in-memory file system, and metadata images of
// topics led by one broker.
package replicationtest

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/vfs"
)

// MemLogs is a replication.LogProvider over real commitlog Logs in one FS
// directory, as the node's provider over the commitlog Manager would be.
type MemLogs struct {
	FS      vfs.FS
	Dir     string
	Options commitlog.Options
	Clock   clock.Clock
	// Unclean opens logs as after a kill -9: recovery re-validates the
	// tail instead of trusting the indexes.
	Unclean bool

	mu   sync.Mutex
	logs map[kafka.TopicPartition]*commitlog.Log
}

// NewMemLogs returns a provider keeping its logs under /data of fsys, with
// Kafka's default log options except small preallocated indexes (10 MiB
// each in memory would make every test slow).
func NewMemLogs(fsys vfs.FS, clk clock.Clock) *MemLogs {
	opts := commitlog.DefaultOptions()
	opts.SegmentIndexBytes = 64 << 10
	return &MemLogs{FS: fsys, Dir: "/data", Options: opts, Clock: clk,
		logs: make(map[kafka.TopicPartition]*commitlog.Log)}
}

// GetOrCreateLog implements replication.LogProvider. Logs open with
// m.Options whatever the topic's: tests size segments and indexes there.
func (m *MemLogs) GetOrCreateLog(tp kafka.TopicPartition, _ kafka.UUID, _ commitlog.Options) (*commitlog.Log, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.logs[tp]; ok {
		return l, nil
	}
	l, err := commitlog.Open(m.FS, filepath.Join(m.Dir, tp.String()), tp, m.Options, m.Clock,
		commitlog.StartState{CleanShutdown: !m.Unclean}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", tp, err)
	}
	m.logs[tp] = l
	return l, nil
}

// DeleteLog implements replication.LogProvider.
func (m *MemLogs) DeleteLog(tp kafka.TopicPartition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.logs[tp]
	if !ok {
		return nil
	}
	delete(m.logs, tp)
	return l.Delete()
}

// Close closes every log.
func (m *MemLogs) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var first error
	for tp, l := range m.logs {
		if err := l.Close(); err != nil && first == nil {
			first = err
		}
		delete(m.logs, tp)
	}
	return first
}

// Topic describes a test topic.
type Topic struct {
	Name       string
	ID         kafka.UUID
	Partitions int32
	// LeaderEpoch is every partition's leader epoch.
	LeaderEpoch int32
}

// Image returns a metadata image in which broker leads every partition of
// topics as the only replica, with the delta that built it from empty.
func Image(broker int32, topics ...Topic) (*metadata.Delta, *metadata.Image, error) {
	d := metadata.NewDelta(metadata.EmptyImage())
	off := int64(0)
	for _, t := range topics {
		if err := d.Replay(off, 1, &metadata.TopicRecord{Name: t.Name, TopicID: t.ID}); err != nil {
			return nil, nil, fmt.Errorf("replay topic %s: %w", t.Name, err)
		}
		off++
		for p := range t.Partitions {
			rec := &metadata.PartitionRecord{TopicID: t.ID, Partition: p, Replicas: []int32{broker},
				ISR: []int32{broker}, Leader: broker, LeaderEpoch: t.LeaderEpoch}
			if err := d.Replay(off, 1, rec); err != nil {
				return nil, nil, fmt.Errorf("replay partition %s-%d: %w", t.Name, p, err)
			}
			off++
		}
	}
	return d, d.Apply(), nil
}

// TopicID returns a fixed, non-zero topic id derived from b.
func TopicID(b byte) kafka.UUID {
	var id kafka.UUID
	for i := range id {
		id[i] = b + byte(i)
	}
	return id
}
