package workload

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/verify/history"
)

const finalProcess = "final"

// FinalRead reads every partition of cfg.Topic from its log start to its
// high watermark with a fresh read_committed client (process "final"): a
// Final op per partition (Offset = the high watermark), then a Poll op per
// record below it. It retries while partitions are unavailable, until ctx
// is done, and then returns an error naming the partitions it could not
// finish.
func FinalRead(ctx context.Context, cfg Config, rec *history.Recorder) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	hw, err := finalEnds(ctx, cfg, rec)
	if err != nil {
		return err
	}
	return finalConsume(ctx, cfg, rec, hw)
}

// finalEnds lists every partition's high watermark, recording a Final op
// for each, retrying the partitions whose leader does not answer.
func finalEnds(ctx context.Context, cfg Config, rec *history.Recorder) (map[int32]int64, error) {
	cl, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	hw := make(map[int32]int64)
	var last error
	for int32(len(hw)) < cfg.Partitions {
		var lo kadm.ListedOffsets
		if lo, last = adm.ListEndOffsets(ctx, cfg.Topic); last != nil {
			cfg.Log.Debug("final read: listing end offsets", "err", last)
		}
		for p, o := range lo[cfg.Topic] {
			if _, done := hw[p]; done || o.Err != nil || p < 0 || p >= cfg.Partitions {
				if o.Err != nil {
					last = fmt.Errorf("partition %d: %w", p, o.Err)
				}
				continue
			}
			hw[p] = o.Offset
			rec.Record(history.Op{Kind: history.Final, Process: finalProcess, Topic: cfg.Topic,
				Partition: p, Offset: o.Offset})
		}
		if int32(len(hw)) == cfg.Partitions {
			break
		}
		if err := sleep(ctx, cfg.Clock, 250*time.Millisecond); err != nil {
			return nil, fmt.Errorf("final read: no high watermark for partitions %v of %s: %w (last error: %v)",
				missing(cfg.Partitions, hw), cfg.Topic, err, last)
		}
	}
	return hw, nil
}

// finalConsume reads each partition by assignment from its log start up to
// hw. A read_committed fetch skips aborted records and does not return
// transaction markers, so the client keeps control records to know its
// position when the last record below hw is a marker.
func finalConsume(ctx context.Context, cfg Config, rec *history.Recorder, hw map[int32]int64) error {
	pos := make(map[int32]int64) // next offset to read, for the partitions not done
	assign := make(map[int32]kgo.Offset)
	for p, end := range hw {
		if end > 0 {
			pos[p] = -1
			assign[p] = kgo.NewOffset().AtStart()
		}
	}
	if len(pos) == 0 {
		return nil
	}
	cl, err := NewClient(cfg,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.Topic: assign}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords())
	if err != nil {
		return err
	}
	defer cl.Close()
	var batch int64
	for len(pos) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("final read: partitions %v of %s not read to their high watermark: %w",
				unfinished(pos, hw), cfg.Topic, ctx.Err())
		}
		fs.EachError(func(t string, p int32, err error) {
			cfg.Log.Debug("final read: fetch error", "partition", p, "err", err)
		})
		batch++
		fs.EachPartition(func(fp kgo.FetchTopicPartition) {
			// Retention may have removed everything below hw.
			if _, reading := pos[fp.Partition]; reading && fp.Err == nil && fp.LogStartOffset >= hw[fp.Partition] {
				delete(pos, fp.Partition)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			end, open := hw[r.Partition]
			if _, reading := pos[r.Partition]; !open || !reading {
				return
			}
			if r.Offset < end && !r.Attrs.IsControl() {
				rec.Record(history.Op{Kind: history.Poll, Process: finalProcess, Topic: r.Topic,
					Partition: r.Partition, Offset: r.Offset, Value: string(r.Value), Batch: batch})
			}
			pos[r.Partition] = r.Offset + 1
			// A record at or past the end also finishes the partition: when
			// the end was listed between an abort and its marker, every
			// record below it is aborted (dropped by the client) and the
			// first one handed out is the marker at the end.
			if r.Offset+1 >= end {
				delete(pos, r.Partition)
				cl.PauseFetchPartitions(map[string][]int32{cfg.Topic: {r.Partition}})
			}
		})
	}
	return nil
}

func missing(n int32, have map[int32]int64) []int32 {
	var out []int32
	for p := range n {
		if _, ok := have[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// unfinished describes the partitions still being read: "3 (at 17 of 40)".
func unfinished(pos, hw map[int32]int64) []string {
	ps := make([]int32, 0, len(pos))
	for p := range pos {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%d (at %d of %d)", p, pos[p], hw[p]))
	}
	return out
}
