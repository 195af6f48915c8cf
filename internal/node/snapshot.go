package node

// Metadata snapshots, as KRaft takes them: a voter writes its image as a
// checkpoint after metadata.log.max.record.bytes.between.snapshots of new
// entries or metadata.log.max.snapshot.interval.ms, the quorum compacts its
// log behind it, and a restarted voter loads the newest checkpoint and
// replays the rest. The active controller serves its newest checkpoint to
// observers with FetchSnapshot (KIP-630).

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/config"
	"sluice/internal/quorum"
)

// Entries kept in the log behind a snapshot. Kafka keeps the log behind its
// newest snapshot until metadata.max.retention.bytes / .ms are exceeded;
// the quorum compacts by entry count, so Sluice keeps about what one
// snapshot interval appends (at an assumed 1 KiB an entry), at least
// minTrailingEntries so a voter or observer a moment behind still reads
// entries, and at most maxTrailingEntries (etcd's catch-up count).
const (
	minTrailingEntries = 16
	maxTrailingEntries = 5000
)

// noTimeBasedSnapshots stands for metadata.log.max.snapshot.interval.ms=0,
// which turns time-based snapshots off in Kafka: the quorum takes a zero
// interval as its default, so the node passes a span no node lives through.
const noTimeBasedSnapshots = 100 * 365 * 24 * time.Hour

// snapshotOptions turn snapshots on for a voter whose metadata log is in
// metaLogDir; n.snapshots serves them afterwards.
func (n *Node) snapshotOptions(metaLogDir string) *quorum.SnapshotOptions {
	n.snapshots = newCheckpointReader(quorum.NewFileSnapshotStore(n.fsys, metaLogDir, n.logger.With("component", "metadata-snapshots")))
	between := n.cfg.Long(config.MetadataLogMaxRecordBytesBetweenSnapshots)
	interval := millis(n.cfg.Long(config.MetadataLogMaxSnapshotIntervalMs))
	if interval <= 0 {
		interval = noTimeBasedSnapshots
	}
	return &quorum.SnapshotOptions{
		Store:           n.snapshots.store,
		Take:            func() ([]byte, error) { return n.loader.Snapshot(), nil },
		Restore:         n.restoreSnapshot,
		MaxBytesBetween: between,
		MaxInterval:     interval,
		TrailingEntries: uint64(min(max(between/1024, minTrailingEntries), maxTrailingEntries)),
		Clock:           n.clk,
	}
}

// restoreSnapshot is the quorum's snapshot Restore: the image becomes the
// snapshot's, and the entries kept for observers restart after it (those
// before are the snapshot's now; an observer behind it fetches it).
func (n *Node) restoreSnapshot(offset int64, epoch int32, data []byte) error {
	if err := n.loader.Restore(offset, epoch, data); err != nil {
		return err
	}
	if n.tail != nil {
		n.tail.reset(offset + 1)
	}
	return nil
}

// checkpointReader reads checkpoints for FetchSnapshot, keeping the last
// one read: an observer pulls it in many chunks.
type checkpointReader struct {
	store *quorum.FileSnapshotStore

	mu   sync.Mutex
	id   quorum.SnapshotID
	data []byte
}

func newCheckpointReader(store *quorum.FileSnapshotStore) *checkpointReader {
	return &checkpointReader{store: store}
}

// read returns the bytes of checkpoint id (quorum.ErrSnapshotNotFound when
// it is gone).
func (r *checkpointReader) read(id quorum.SnapshotID) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.data != nil && r.id == id {
		return r.data, nil
	}
	b, err := r.store.ReadCheckpoint(id)
	if err != nil {
		return nil, err
	}
	r.id, r.data = id, b
	return b, nil
}

// FetchSnapshot implements api.SnapshotServer: a chunk of the checkpoint an
// observer was told of in a Fetch answer, from the active controller only.
func (n *Node) FetchSnapshot(_ context.Context, req *kmsg.FetchSnapshotRequest) (*kmsg.FetchSnapshotResponse, error) {
	resp := kmsg.NewPtrFetchSnapshotResponse()
	if req.ClusterID != nil && *req.ClusterID != n.clusterID {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp, nil
	}
	p := req.Topics[0].Partitions[0]
	rt := kmsg.NewFetchSnapshotResponseTopic()
	rt.Topic = req.Topics[0].Topic
	rp := kmsg.NewFetchSnapshotResponseTopicPartition()
	rp.Partition, rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = p.Partition, p.SnapshotID.EndOffset, p.SnapshotID.Epoch
	var err error
	if n.driver == nil || n.snapshots == nil {
		err = fmt.Errorf("node %d is not a controller: %w", n.cfg.NodeID(), api.ErrNotController)
	} else {
		err = n.fetchSnapshotChunk(n.driver.Status(), int64(req.MaxBytes), p, &rp)
	}
	if err != nil {
		return nil, err
	}
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp, nil
}

func (n *Node) fetchSnapshotChunk(st quorum.Status, maxBytes int64, p kmsg.FetchSnapshotRequestTopicPartition, rp *kmsg.FetchSnapshotResponseTopicPartition) error {
	rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = st.Leader, int32(st.Epoch)
	switch {
	case !st.IsLeader:
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		return nil
	case p.CurrentLeaderEpoch >= 0 && int64(p.CurrentLeaderEpoch) < st.Epoch:
		rp.ErrorCode = kerr.FencedLeaderEpoch.Code
		return nil
	case p.CurrentLeaderEpoch >= 0 && int64(p.CurrentLeaderEpoch) > st.Epoch:
		rp.ErrorCode = kerr.UnknownLeaderEpoch.Code
		return nil
	}
	data, err := n.snapshots.read(quorum.SnapshotID{EndOffset: p.SnapshotID.EndOffset, Epoch: p.SnapshotID.Epoch})
	if errors.Is(err, quorum.ErrSnapshotNotFound) {
		rp.ErrorCode = kerr.SnapshotNotFound.Code
		return nil
	}
	if err != nil {
		return fmt.Errorf("fetch snapshot: %w", err)
	}
	size := int64(len(data))
	rp.Size, rp.Position = size, p.Position
	if p.Position < 0 || p.Position >= size {
		rp.ErrorCode = kerr.PositionOutOfRange.Code
		return nil
	}
	end := p.Position + min(max(maxBytes, 1), size-p.Position)
	rp.Bytes = data[p.Position:end]
	return nil
}

// latestSnapshotFrom returns the newest checkpoint's id when an observer
// can continue from it: the entries after it must still be kept (from is
// the first offset kept for observers).
func (n *Node) latestSnapshotFrom(from int64) (quorum.SnapshotID, bool) {
	if n.snapshots == nil {
		return quorum.SnapshotID{}, false
	}
	id, ok, err := n.snapshots.store.LatestID()
	if err != nil {
		n.logger.Warn("newest metadata snapshot unreadable", "err", err)
		return quorum.SnapshotID{}, false
	}
	return id, ok && id.EndOffset >= from
}

var _ api.SnapshotServer = (*Node)(nil)
