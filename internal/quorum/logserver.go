package quorum

// The active controller serves the committed metadata log to observers
// (dedicated brokers) with Fetch on __cluster_metadata-0, straight from the
// batches its LogEntryStore keeps, as a KRaft leader serves its log. An
// observer behind the log start (compacted behind a snapshot) is answered,
// as Kafka does (KIP-630), with no error and the newest snapshot's id, which
// it pulls with FetchSnapshot; when no snapshot covers the gap it gets
// OFFSET_OUT_OF_RANGE.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

// LogServer answers observers' Fetch and FetchSnapshot on a voter.
type LogServer struct {
	driver    *Driver
	store     *LogEntryStore
	snapshots *checkpointReader // nil without snapshots
	clusterID string
	clk       clock.Clock
	log       *slog.Logger
}

// NewLogServer serves the log in store, which driver runs; snapshots may be
// nil when the voter takes none.
func NewLogServer(driver *Driver, store *LogEntryStore, snapshots *FileSnapshotStore, clusterID string, logger *slog.Logger) *LogServer {
	s := &LogServer{driver: driver, store: store, clusterID: clusterID, clk: driver.opts.Clock, log: logger}
	if snapshots != nil {
		s.snapshots = &checkpointReader{store: snapshots}
	}
	return s
}

// observerMaxWait bounds how long a metadata fetch waits for new entries.
const observerMaxWait = 500 * time.Millisecond

// FetchMetadataLog answers an observer's Fetch of __cluster_metadata-0:
// committed entries only (high watermark = commit offset + 1), from the
// leader only (others answer NOT_LEADER_OR_FOLLOWER naming the leader).
func (s *LogServer) FetchMetadataLog(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error) {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(req.Version)
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		isMeta := t.Topic == MetadataTopic || t.TopicID == kafka.MetadataTopicID()
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = p.Partition
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			if !isMeta || p.Partition != 0 {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			} else {
				s.fetchPartition(ctx, req, p, &rp)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (s *LogServer) fetchPartition(ctx context.Context, req *kmsg.FetchRequest, p kmsg.FetchRequestTopicPartition, rp *kmsg.FetchResponseTopicPartition) {
	deadline := s.clk.NewTimer(min(time.Duration(req.MaxWaitMillis)*time.Millisecond, observerMaxWait))
	defer deadline.Stop()
	for {
		changed := s.driver.StatusChanged()
		st := s.driver.Status()
		rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = st.Leader, int32(st.Epoch)
		if !st.IsLeader {
			rp.ErrorCode = kerr.NotLeaderForPartition.Code
			return
		}
		// The voter's log start (Status), not only the store's: a restart
		// does not keep the store's, so entries a snapshot covers linger in
		// its first segment, and an observer behind the snapshot must get
		// the snapshot rather than those.
		hw, start := st.CommitOffset+1, max(s.store.LogStartOffset(), st.LogStartOffset)
		rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = hw, hw, start
		if p.FetchOffset < start {
			if id, ok := s.latestSnapshotFrom(start); ok {
				rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = id.EndOffset, id.Epoch
				return
			}
			rp.ErrorCode = kerr.OffsetOutOfRange.Code
			return
		}
		if p.FetchOffset < hw {
			data, err := s.store.ReadBatches(p.FetchOffset, max(p.PartitionMaxBytes, 1<<20), hw)
			if err != nil {
				// Compacted between the two reads, or a disk error: the
				// observer retries and learns which.
				s.log.Debug("metadata fetch read failed", "offset", p.FetchOffset, "err", err)
				rp.ErrorCode = kerr.UnknownServerError.Code
				return
			}
			if len(data) > 0 {
				rp.RecordBatches = data
				return
			}
		}
		select {
		case <-changed:
		case <-deadline.C():
			return
		case <-ctx.Done():
			return
		case <-s.driver.Done():
			return
		}
	}
}

// latestSnapshotFrom returns the newest checkpoint's id when an observer
// can continue from it: the entries after it must still be in the log
// (from is the log start offset).
func (s *LogServer) latestSnapshotFrom(from int64) (SnapshotID, bool) {
	if s.snapshots == nil {
		return SnapshotID{}, false
	}
	id, ok, err := s.snapshots.store.LatestID()
	if err != nil {
		s.log.Warn("newest metadata snapshot unreadable", "err", err)
		return SnapshotID{}, false
	}
	return id, ok && id.EndOffset >= from
}

// FetchSnapshot answers a chunk of the checkpoint an observer was told of
// in a Fetch answer, from the leader only.
func (s *LogServer) FetchSnapshot(_ context.Context, req *kmsg.FetchSnapshotRequest) (*kmsg.FetchSnapshotResponse, error) {
	resp := kmsg.NewPtrFetchSnapshotResponse()
	if req.ClusterID != nil && *req.ClusterID != s.clusterID {
		resp.ErrorCode = kerr.InconsistentClusterID.Code
		return resp, nil
	}
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		return resp, nil
	}
	p := req.Topics[0].Partitions[0]
	rt := kmsg.NewFetchSnapshotResponseTopic()
	rt.Topic = req.Topics[0].Topic
	rp := kmsg.NewFetchSnapshotResponseTopicPartition()
	rp.Partition, rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = p.Partition, p.SnapshotID.EndOffset, p.SnapshotID.Epoch
	if s.snapshots == nil {
		rp.ErrorCode = kerr.SnapshotNotFound.Code
	} else if err := s.snapshotChunk(s.driver.Status(), int64(req.MaxBytes), p, &rp); err != nil {
		return nil, err
	}
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp, nil
}

func (s *LogServer) snapshotChunk(st Status, maxBytes int64, p kmsg.FetchSnapshotRequestTopicPartition, rp *kmsg.FetchSnapshotResponseTopicPartition) error {
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
	data, err := s.snapshots.read(SnapshotID{EndOffset: p.SnapshotID.EndOffset, Epoch: p.SnapshotID.Epoch})
	if errors.Is(err, ErrSnapshotNotFound) {
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

// checkpointReader reads checkpoints for FetchSnapshot, keeping the last
// one read: an observer pulls it in many chunks.
type checkpointReader struct {
	store *FileSnapshotStore

	mu   sync.Mutex
	id   SnapshotID
	data []byte
}

// read returns the bytes of checkpoint id (ErrSnapshotNotFound when it is
// gone).
func (r *checkpointReader) read(id SnapshotID) ([]byte, error) {
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
