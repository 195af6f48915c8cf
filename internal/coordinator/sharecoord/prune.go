package sharecoord

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/internal/coordinator/runtime"
	"github.com/sluice-io/sluice/internal/records"
)

// observingWriter tells each shard the offsets of the snapshot records it
// appended, which its Write's completion does not carry: the shard's
// redundant offset (Kafka's ShareCoordinatorOffsetsManager, updated by
// replay with the record's offset) needs them.
type observingWriter struct {
	runtime.PartitionWriter
	c *ShareCoordinator
}

func (w observingWriter) Append(ctx context.Context, partition int32, batch []byte) (int64, error) {
	last, err := w.PartitionWriter.Append(ctx, partition, batch)
	if err == nil {
		w.c.snapshotsAppended(ctx, partition, batch, last)
	}
	return last, err
}

type appended struct {
	key, value []byte
	offset     int64
}

// snapshotsAppended hands the shard the offsets of batch's records, which
// ends at last. It runs on the shard's writer goroutine before the writes'
// completions, so the shard learns them in log order.
func (c *ShareCoordinator) snapshotsAppended(ctx context.Context, partition int32, batch []byte, last int64) {
	h, err := records.ParseHeader(batch)
	if err != nil {
		return
	}
	base := last - int64(h.LastOffsetDelta)
	var recs []appended
	_ = records.ForEachRecord(batch, func(r records.Record) error {
		recs = append(recs, appended{key: r.Key, value: r.Value, offset: base + int64(r.OffsetDelta)})
		return nil
	})
	if len(recs) == 0 {
		return
	}
	// A shard that stopped meanwhile is left alone: the next one replays
	// these records with their offsets.
	runtime.Call(ctx, c.rt, partition, func(_ time.Time, s *shareShard, reply func(struct{})) {
		for _, r := range recs {
			s.mgr.SnapshotAppended(r.key, r.value, r.offset)
		}
		reply(struct{}{})
	})
}

// pruneLoop deletes, every PruneInterval, the records of each led
// partition below its redundant offset (Kafka's setupRecordPruning), when
// that offset moved since the last deletion.
func (c *ShareCoordinator) pruneLoop(ctx context.Context) {
	lastPruned := map[int32]int64{}
	for {
		t := c.opts.Clock.NewTimer(c.opts.PruneInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		c.prune(ctx, lastPruned)
	}
}

func (c *ShareCoordinator) prune(ctx context.Context, lastPruned map[int32]int64) {
	type redundant struct {
		offset int64
		ok     bool
	}
	answers := runtime.CallAll(ctx, c.rt, func(_ time.Time, s *shareShard, reply func(redundant)) {
		o, ok := s.mgr.LastRedundantOffset()
		reply(redundant{o, ok})
	})
	for _, a := range answers {
		if a.Code != 0 || !a.Value.ok || a.Value.offset <= lastPruned[a.Partition] {
			continue
		}
		if err := c.opts.DeleteRecords(ctx, a.Partition, a.Value.offset); err != nil {
			c.opts.Logger.Warn("pruning "+ShareGroupStateTopic, "partition", a.Partition, "offset", a.Value.offset, "err", err)
			continue
		}
		c.opts.Logger.Debug("pruned "+ShareGroupStateTopic, "partition", a.Partition, "before_offset", a.Value.offset)
		lastPruned[a.Partition] = a.Value.offset
	}
}
