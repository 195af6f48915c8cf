package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// logRecord is one record as the audit read it back from the topic.
type logRecord struct {
	seq       int64
	partition int32
	offset    int64
	ok        bool // key and value are the producer's
}

// readAll reads every partition of topic from its start to its high
// watermark at the time of the call, with no consumer group.
func readAll(ctx context.Context, seeds []string, topic string) ([]logRecord, error) {
	admin, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, fmt.Errorf("audit client: %w", err)
	}
	defer admin.Close()
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("audit: end offsets: %w", err)
	}
	want := map[int32]int64{}
	offsets := map[int32]kgo.Offset{}
	var total int64
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			want[o.Partition] = o.Offset
			offsets[o.Partition] = kgo.NewOffset().AtStart()
			total += o.Offset
		}
	})
	if err := ends.Error(); err != nil {
		return nil, fmt.Errorf("audit: end offsets: %w", err)
	}
	reader, err := kgo.NewClient(kgo.SeedBrokers(seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return nil, fmt.Errorf("audit reader: %w", err)
	}
	defer reader.Close()
	return drain(ctx, reader, want, total)
}

// drain polls until every partition reached its wanted end offset.
func drain(ctx context.Context, reader *kgo.Client, want map[int32]int64, total int64) ([]logRecord, error) {
	out := make([]logRecord, 0, total)
	next := map[int32]int64{}
	for !reached(next, want) {
		fetches := reader.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("audit: read %d of %d records: %w", len(out), total, ctx.Err())
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset >= want[r.Partition] {
				return
			}
			seq, ok := parseKey(r.Key)
			ok = ok && string(r.Value) == recordValue(seq)
			out = append(out, logRecord{seq, r.Partition, r.Offset, ok})
			next[r.Partition] = r.Offset + 1
		})
	}
	return out, nil
}

func reached(next, want map[int32]int64) bool {
	for p, end := range want {
		if next[p] < end {
			return false
		}
	}
	return true
}

// auditResult is what the log holds against what was acknowledged.
type auditResult struct {
	missing    []int64 // acknowledged, not in the log
	duplicated []int64 // in the log more than once
	moved      []int64 // in the log elsewhere than its acknowledgement said
	foreign    int     // records that are not the producer's
	unacked    int     // in the log, never acknowledged (a failed or unknown outcome)
}

func (a auditResult) clean() bool {
	return len(a.missing)+len(a.duplicated)+len(a.moved)+a.foreign+a.unacked == 0
}

// audit compares the acknowledged records with the log: each must be there
// exactly once, at the partition and offset its acknowledgement gave.
func audit(acked map[int64]ack, log []logRecord) auditResult {
	var a auditResult
	where := map[int64][]ack{}
	for _, r := range log {
		if !r.ok {
			a.foreign++
			continue
		}
		where[r.seq] = append(where[r.seq], ack{r.partition, r.offset})
	}
	for seq, at := range where {
		if len(at) > 1 {
			a.duplicated = append(a.duplicated, seq)
		}
		want, ok := acked[seq]
		switch {
		case !ok:
			a.unacked++
		case at[0] != want:
			a.moved = append(a.moved, seq)
		}
	}
	for seq := range acked {
		if len(where[seq]) == 0 {
			a.missing = append(a.missing, seq)
		}
	}
	for _, s := range [][]int64{a.missing, a.duplicated, a.moved} {
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	}
	return a
}

func (a auditResult) String() string {
	return fmt.Sprintf("missing %d %v, duplicated %d %v, at another offset %d %v, not the producer's %d, never acknowledged %d",
		len(a.missing), head(a.missing), len(a.duplicated), head(a.duplicated), len(a.moved), head(a.moved), a.foreign, a.unacked)
}

func head(s []int64) []int64 { return s[:min(5, len(s))] }
