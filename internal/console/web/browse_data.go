package web

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/clock"
)

// Time bounds of one browser page: the whole page, and each wait for the
// next records (the end of a range made only of transaction markers or
// compacted offsets never delivers a record).
const (
	browseDeadline = 15 * time.Second
	browseIdle     = 2 * time.Second
	// newestChunk is how many offsets a newest-first search reads forward
	// at a time while stepping back through the log.
	newestChunk = 5_000
)

// partitionBounds are a partition's offsets when the page was asked for.
type partitionBounds struct {
	Start, End int64 // log start offset and high watermark
	Partitions int32 // the topic's partition count
}

// browseResult is one page of the message browser.
type browseResult struct {
	Query   browseQuery
	Bounds  partitionBounds
	Records []*kgo.Record // in display order
	Scanned int
	Matched int
	// From is the first offset read; Next the offset after the last one
	// examined (newest first: the lowest offset examined).
	From, Next int64
	Stop       stopReason
	// Older, newest first, is the "before" of the next older page; -1 when
	// the log start was reached. Newer, forward, is the next page's offset.
	Older, Newer int64
	Notes        []string
}

// browser reads pages of a partition for one session's client.
type browser struct {
	cl  *kgo.Client
	clk clock.Clock
}

// bounds looks up topic's partition count and partition's offsets. An
// unknown topic or partition is a *queryError naming the valid range.
func (b browser) bounds(ctx context.Context, topic string, partition int32) (partitionBounds, error) {
	adm := kadm.NewClient(b.cl)
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return partitionBounds{}, fmt.Errorf("listing start offsets of %s: %w", topic, err)
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return partitionBounds{}, fmt.Errorf("listing end offsets of %s: %w", topic, err)
	}
	ps := starts[topic]
	if bad, ok := ps[-1]; ok && bad.Err != nil {
		if errors.Is(bad.Err, kerr.UnknownTopicOrPartition) {
			return partitionBounds{}, badQuery("topic %q does not exist", clip(topic))
		}
		return partitionBounds{}, fmt.Errorf("topic %s: %w", topic, bad.Err)
	}
	pb := partitionBounds{Partitions: int32(len(ps))}
	s, ok := ps[partition]
	if !ok {
		return pb, badQuery("partition %d does not exist: topic %q has partitions 0 to %d", partition, clip(topic), pb.Partitions-1)
	}
	e := ends[topic][partition]
	for _, err := range []error{s.Err, e.Err} {
		if err != nil {
			return pb, fmt.Errorf("offsets of %s-%d: %w", topic, partition, err)
		}
	}
	pb.Start, pb.End = s.Offset, e.Offset
	return pb, nil
}

// browse reads the page q asks for, within q's limits and browseDeadline.
func (b browser) browse(ctx context.Context, q browseQuery) (browseResult, error) {
	ctx, cancel := withTimeout(ctx, b.clk, browseDeadline)
	defer cancel()
	res := browseResult{Query: q, Older: -1, Newer: -1, Notes: slices.Clone(q.Notes)}
	var err error
	if res.Bounds, err = b.bounds(ctx, q.Topic, q.Partition); err != nil {
		return res, err
	}
	if q.Mode == modeNewest {
		return res, b.newest(ctx, q, &res)
	}
	from, err := b.startOffset(ctx, q, &res)
	if err != nil {
		return res, err
	}
	r := scanRange{From: from, To: res.Bounds.End, MaxScan: q.Scan, MaxResults: q.Limit}
	if q.Search == "" {
		r.MaxScan = q.Limit
	}
	return res, b.forward(ctx, q, r, &res)
}

// startOffset resolves where a forward page starts. An offset past the end
// is a *queryError giving the valid range; one below the log start (deleted
// by retention) starts at the log start with a note.
func (b browser) startOffset(ctx context.Context, q browseQuery, res *browseResult) (int64, error) {
	bd := res.Bounds
	switch {
	case q.Mode == modeTimestamp:
		return b.offsetForTime(ctx, q, res)
	case q.Offset < 0:
		return bd.Start, nil
	case q.Offset > bd.End:
		return 0, badQuery("offset %d is past the end of %s-%d: %s", q.Offset, clip(q.Topic), q.Partition, bd.validRange())
	case q.Offset < bd.Start:
		res.Notes = append(res.Notes, fmt.Sprintf("offset %d is below the log start offset %d (deleted): reading from %d", q.Offset, bd.Start, bd.Start))
		return bd.Start, nil
	}
	return q.Offset, nil
}

// validRange describes the offsets a page may start at.
func (bd partitionBounds) validRange() string {
	if bd.Start == bd.End {
		return fmt.Sprintf("the partition is empty (log start and end offset %d)", bd.End)
	}
	return fmt.Sprintf("valid offsets are %d to %d (the end offset %d is where the next record will be written)", bd.Start, bd.End-1, bd.End)
}

// offsetForTime is ListOffsets by timestamp: the first offset whose
// timestamp is at or after q.Timestamp, or the end offset when none is.
func (b browser) offsetForTime(ctx context.Context, q browseQuery, res *browseResult) (int64, error) {
	listed, err := kadm.NewClient(b.cl).ListOffsetsAfterMilli(ctx, q.Timestamp, q.Topic)
	if err != nil {
		return 0, fmt.Errorf("listing offsets of %s by time: %w", q.Topic, err)
	}
	lo, ok := listed.Lookup(q.Topic, q.Partition)
	if !ok {
		return 0, fmt.Errorf("listing offsets of %s-%d by time: no answer for the partition", q.Topic, q.Partition)
	}
	if lo.Err != nil {
		return 0, fmt.Errorf("listing offsets of %s-%d by time: %w", q.Topic, q.Partition, lo.Err)
	}
	if lo.Offset >= res.Bounds.End {
		res.Notes = append(res.Notes, fmt.Sprintf("no record has a timestamp at or after %s", time.UnixMilli(q.Timestamp).UTC().Format(time.RFC3339Nano)))
	}
	return lo.Offset, nil
}

// forward reads r with a direct consumer opened at r.From.
func (b browser) forward(ctx context.Context, q browseQuery, r scanRange, res *browseResult) error {
	res.From, res.Next = r.From, r.From
	if r.From >= r.To {
		res.Stop = stopEnd
		return nil
	}
	src, err := openPartition(b.cl, q.Topic, q.Partition, r.From)
	if err != nil {
		return err
	}
	defer src.Close()
	sr, err := scan(ctx, b.clk, src, r, matcher(q), browseIdle)
	res.Records, res.Scanned, res.Matched, res.Next, res.Stop = sr.Records, sr.Scanned, sr.Matched, sr.Next, sr.Stop
	if sr.Next < res.Bounds.End {
		res.Newer = sr.Next
	}
	return err
}

// newest reads backwards from q.Offset (or the end offset) in chunks read
// forward, keeping each chunk's newest matches, until q.Limit matches, the
// scan limit or the log start; the page shows them newest first.
func (b browser) newest(ctx context.Context, q browseQuery, res *browseResult) error {
	bd := res.Bounds
	upper := bd.End
	if q.Offset >= 0 {
		if q.Offset > bd.End {
			return badQuery("offset %d is past the end of %s-%d: %s", q.Offset, clip(q.Topic), q.Partition, bd.validRange())
		}
		upper = max(q.Offset, bd.Start)
	}
	res.From, res.Next, res.Stop = upper, upper, stopEnd
	if upper <= bd.Start {
		return nil
	}
	chunk := int64(newestChunk)
	if q.Search == "" {
		chunk = int64(q.Limit)
	}
	src, err := openPartition(b.cl, q.Topic, q.Partition, max(bd.Start, upper-min(chunk, int64(q.Scan))))
	if err != nil {
		return err
	}
	defer src.Close()
	return b.stepBack(ctx, q, src, chunk, res)
}

// stepBack reads chunks below res.Next until the page is full, the scan
// limit is spent or the log start is reached. A chunk never spans more
// offsets than the scan may still examine, so the scan limit cuts between
// chunks, never inside one (where it would skip the chunk's newest records).
func (b browser) stepBack(ctx context.Context, q browseQuery, src seekableSource, chunk int64, res *browseResult) error {
	return b.stepBackWith(ctx, q, src, chunk, res, matcher(q))
}

func (b browser) stepBackWith(ctx context.Context, q browseQuery, src seekableSource, chunk int64, res *browseResult, match func(*kgo.Record) bool) error {
	start := res.Bounds.Start
	res.Stop = stopStart
	for first := true; res.Next > start; first = false {
		need, budget := q.Limit-len(res.Records), q.Scan-res.Scanned
		if q.Search == "" {
			budget = need
		}
		if need <= 0 {
			res.Stop = stopResults
			break
		}
		if budget <= 0 {
			res.Stop = stopScan
			break
		}
		from := max(start, res.Next-min(chunk, int64(budget)))
		if !first {
			src.SeekTo(from)
		}
		r := scanRange{From: from, To: res.Next, MaxScan: budget, MaxResults: need, KeepNewest: true}
		sr, err := scan(ctx, b.clk, src, r, match, browseIdle)
		res.Scanned += sr.Scanned
		res.Matched += sr.Matched
		res.Records = append(res.Records, reversed(sr.Records)...)
		if err != nil {
			return err
		}
		res.Next = from
		if sr.Matched > len(sr.Records) {
			// Older matches of this chunk were dropped: the next older
			// page starts below the oldest one shown.
			res.Next = sr.Records[0].Offset
		}
	}
	if res.Next > start {
		res.Older = res.Next
	}
	return nil
}

func reversed(recs []*kgo.Record) []*kgo.Record {
	out := slices.Clone(recs)
	slices.Reverse(out)
	return out
}
