package web

import (
	"bytes"
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/clock"
)

// recordSource hands out a partition's records in offset order from where
// it was positioned. Poll returns at most max records; with none available
// it blocks until ctx ends and returns ctx's error.
type recordSource interface {
	Poll(ctx context.Context, max int) ([]*kgo.Record, error)
}

// seekableSource is a recordSource that can be moved to another offset;
// records fetched before the move may still arrive (scan skips them).
type seekableSource interface {
	recordSource
	SeekTo(offset int64)
}

// stopReason says why a scan ended; the page reports it.
type stopReason string

const (
	stopEnd     stopReason = "reached the end of the range"
	stopScan    stopReason = "reached the scan limit"
	stopResults stopReason = "reached the results limit"
	stopStart   stopReason = "reached the log start offset"
	stopIdle    stopReason = "no more records arrived in time (the rest of the range may have been compacted away)"
)

// scanRange is one forward read: offsets [From, To) of a partition.
type scanRange struct {
	From, To int64
	// MaxScan bounds the records examined; MaxResults the matches kept.
	MaxScan, MaxResults int
	// KeepNewest keeps the last MaxResults matches instead of stopping at
	// the first MaxResults (a newest-first search reads a chunk forward
	// but wants its newest matches).
	KeepNewest bool
}

// scanResult is what a scan found.
type scanResult struct {
	// Records are the matches in offset order, at most MaxResults.
	Records []*kgo.Record
	Scanned int
	Matched int
	// Next is the offset after the last record examined (From when none):
	// where a following forward page starts.
	Next int64
	Stop stopReason
}

// pollBatch bounds one Poll, so a scan limit of 1 never takes a whole fetch.
const pollBatch = 500

// scan reads r.From..r.To from src, examining at most r.MaxScan records:
// it never asks src for more records than the scan may still examine, so it
// stops exactly at the limit. Records outside the range (a fetch buffered
// before a seek) are skipped without being counted, and so are
// transaction markers (control records). idle bounds each wait
// for records on clk; its expiry ends the scan with stopIdle, ctx's with
// ctx's error.
func scan(ctx context.Context, clk clock.Clock, src recordSource, r scanRange, match func(*kgo.Record) bool, idle time.Duration) (scanResult, error) {
	res := scanResult{Next: r.From}
	for {
		switch {
		case res.Next >= r.To:
			res.Stop = stopEnd
			return res, nil
		case res.Scanned >= r.MaxScan:
			res.Stop = stopScan
			return res, nil
		case !r.KeepNewest && len(res.Records) >= r.MaxResults:
			res.Stop = stopResults
			return res, nil
		}
		pctx, cancel := withTimeout(ctx, clk, idle)
		recs, err := src.Poll(pctx, min(r.MaxScan-res.Scanned, pollBatch))
		timedOut := pctx.Err() != nil
		cancel()
		if err != nil {
			if ctx.Err() == nil && timedOut {
				res.Stop = stopIdle
				return res, nil
			}
			return res, err
		}
		for _, rec := range recs {
			if rec.Offset < res.Next || rec.Offset >= r.To {
				continue
			}
			if rec.Attrs.IsControl() { // a transaction marker: passed, not shown or counted
				res.Next = rec.Offset + 1
				continue
			}
			res.Scanned++
			res.Next = rec.Offset + 1
			if match(rec) {
				res.Matched++
				res.keep(rec, r)
			}
			if res.Scanned >= r.MaxScan || !r.KeepNewest && len(res.Records) >= r.MaxResults {
				break
			}
		}
	}
}

// keep adds a match, dropping the oldest when keeping the newest.
func (res *scanResult) keep(rec *kgo.Record, r scanRange) {
	if r.KeepNewest && len(res.Records) == r.MaxResults {
		copy(res.Records, res.Records[1:])
		res.Records[len(res.Records)-1] = rec
		return
	}
	res.Records = append(res.Records, rec)
}

// matcher is the search of q: every record when q has no search text.
func matcher(q browseQuery) func(*kgo.Record) bool {
	if q.Search == "" {
		return func(*kgo.Record) bool { return true }
	}
	needle := []byte(q.Search)
	return func(rec *kgo.Record) bool {
		inKey := q.In != searchValue && bytes.Contains(rec.Key, needle)
		return inKey || q.In != searchKey && bytes.Contains(rec.Value, needle)
	}
}

// withTimeout is context.WithTimeout on an injected clock.
func withTimeout(ctx context.Context, clk clock.Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	t := clk.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	return ctx, func() { t.Stop(); cancel(context.Canceled) }
}
