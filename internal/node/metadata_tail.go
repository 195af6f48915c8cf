package node

// A voter keeps the committed metadata entries it applied in memory, as
// record batches, so the active controller can answer observers' Fetch of
// __cluster_metadata-0 without reading the raft log (which the quorum
// package owns). The tail is bounded, and follows the quorum's log start
// (entries compacted behind a snapshot are dropped). An observer behind its
// start is answered, as Kafka does (KIP-630), with no error and the newest
// snapshot's id, which it pulls with FetchSnapshot; when no snapshot covers
// the gap it gets OFFSET_OUT_OF_RANGE.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/internal/api"
	"sluice/internal/controller"
	"sluice/internal/kafka"
	"sluice/internal/records"
)

// metadataTailBytes bounds the batches kept for observers.
const metadataTailBytes = 256 << 20

// metadataTopicID is the topic id Kafka gives __cluster_metadata
// (Uuid.METADATA_TOPIC_ID, AAAAAAAAAAAAAAAAAAAAAQ).
var metadataTopicID = kafka.UUID{15: 1}

// committedTail holds the latest committed entries as record batches.
type committedTail struct {
	maxBytes int

	mu      sync.Mutex
	batches [][]byte
	offsets []int64
	bytes   int
	// start is the first offset an observer may fetch from: entries below
	// it were dropped (or never seen).
	start int64
	// grew is closed and replaced whenever an entry is added.
	grew chan struct{}
}

// newCommittedTail keeps up to maxBytes of batches (at least the last one).
func newCommittedTail(maxBytes int) *committedTail {
	return &committedTail{maxBytes: maxBytes, grew: make(chan struct{})}
}

// add keeps one committed entry.
func (t *committedTail) add(offset int64, epoch int32, data []byte) error {
	opts := records.NonIdempotent(records.NoCompression)
	opts.BaseOffset, opts.PartitionLeaderEpoch = offset, epoch
	b := records.NewBuilder(opts)
	b.Add(time.Now().UnixMilli(), nil, data, nil)
	batch, err := b.Build()
	if err != nil {
		return fmt.Errorf("metadata entry %d as a batch: %w", offset, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.batches = append(t.batches, batch)
	t.offsets = append(t.offsets, offset)
	t.bytes += len(batch)
	for t.bytes > t.maxBytes && len(t.batches) > 1 {
		t.bytes -= len(t.batches[0])
		t.start = t.offsets[0] + 1
		t.batches, t.offsets = t.batches[1:], t.offsets[1:]
	}
	close(t.grew)
	t.grew = make(chan struct{})
	return nil
}

// reset drops every entry: the next one kept is at offset start (a
// snapshot was restored, covering everything before it).
func (t *committedTail) reset(start int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.batches, t.offsets, t.bytes, t.start = nil, nil, 0, start
}

// trimBefore drops the entries below offset (compacted behind a snapshot).
func (t *committedTail) trimBefore(offset int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if offset <= t.start {
		return
	}
	i := 0
	for i < len(t.offsets) && t.offsets[i] < offset {
		t.bytes -= len(t.batches[i])
		i++
	}
	t.batches, t.offsets, t.start = t.batches[i:], t.offsets[i:], offset
}

// read returns the batches from offset on, up to maxBytes (at least one),
// whether offset is still served, and a channel closed when more arrive.
func (t *committedTail) read(offset int64, maxBytes int) ([]byte, bool, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if offset < t.start {
		return nil, false, t.grew
	}
	var out []byte
	for i, o := range t.offsets {
		if o < offset {
			continue
		}
		if len(out) > 0 && len(out)+len(t.batches[i]) > maxBytes {
			break
		}
		out = append(out, t.batches[i]...)
	}
	return out, true, t.grew
}

// observerMaxWait bounds how long a metadata fetch waits for new entries.
const observerMaxWait = 500 * time.Millisecond

// FetchMetadataLog implements api.MetadataLogServer: an observer's Fetch of
// __cluster_metadata-0, answered by the active controller with committed
// entries only (high watermark = commit offset + 1).
func (n *Node) FetchMetadataLog(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error) {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(req.Version)
	for _, t := range req.Topics {
		rt := kmsg.NewFetchResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		isMeta := t.Topic == controller.MetadataTopic || t.TopicID == metadataTopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewFetchResponseTopicPartition()
			rp.Partition = p.Partition
			rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
			switch {
			case !isMeta || p.Partition != 0:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				n.fetchMetadataPartition(ctx, req, p, &rp)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

func (n *Node) fetchMetadataPartition(ctx context.Context, req *kmsg.FetchRequest, p kmsg.FetchRequestTopicPartition, rp *kmsg.FetchResponseTopicPartition) {
	st := n.driver.Status()
	if !st.IsLeader {
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
		rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = st.Leader, int32(st.Epoch)
		return
	}
	wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, observerMaxWait)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	n.tail.trimBefore(st.LogStartOffset)
	for {
		data, ok, grew := n.tail.read(p.FetchOffset, int(max(p.PartitionMaxBytes, 1<<20)))
		rp.HighWatermark = n.Image().Offset() + 1
		rp.LastStableOffset, rp.LogStartOffset = rp.HighWatermark, n.tail.startOffset()
		rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = st.Leader, int32(st.Epoch)
		if !ok {
			if id, found := n.latestSnapshotFrom(rp.LogStartOffset); found {
				rp.SnapshotID.EndOffset, rp.SnapshotID.Epoch = id.EndOffset, id.Epoch
				return
			}
			rp.ErrorCode = kerr.OffsetOutOfRange.Code
			return
		}
		if len(data) > 0 {
			rp.RecordBatches = data
			return
		}
		select {
		case <-grew:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (t *committedTail) startOffset() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.start
}

var _ api.MetadataLogServer = (*Node)(nil)
