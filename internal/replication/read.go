package replication

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/commitlog/epoch"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
)

// Isolation bounds what a read may see: Kafka's FetchIsolation.
type Isolation int8

const (
	// IsolationHighWatermark is read_uncommitted: up to the high watermark.
	IsolationHighWatermark Isolation = iota
	// IsolationCommitted is read_committed: up to the last stable offset.
	IsolationCommitted
	// IsolationLogEnd is a follower's read: up to the log end offset.
	IsolationLogEnd
)

// IsolationForLevel maps a request's isolation_level (0 read_uncommitted,
// 1 read_committed) to a consumer's Isolation.
func IsolationForLevel(level int8) Isolation {
	if level == 1 {
		return IsolationCommitted
	}
	return IsolationHighWatermark
}

// EpochEndOffset is an OffsetForLeaderEpoch answer, and a Fetch response's
// diverging epoch.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// ReadOptions describe one partition's part of a fetch.
type ReadOptions struct {
	FetchOffset int64
	// CurrentLeaderEpoch is the fetcher's view of the leader epoch (-1: none).
	CurrentLeaderEpoch int32
	// LastFetchedEpoch is the epoch of the last batch the fetcher holds
	// (-1: none); a mismatch with this log answers a diverging epoch.
	LastFetchedEpoch int32
	MaxBytes         int32
	// MinOneBatch returns the first batch even if it exceeds MaxBytes (KIP-74).
	MinOneBatch bool
	Isolation   Isolation
	// RequireLeader refuses the read on a follower (consumers without
	// KIP-392 follower fetching).
	RequireLeader bool
}

// ReadResult is one partition's fetched data and offsets.
type ReadResult struct {
	Records          commitlog.ReadResult
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	LogEndOffset     int64
	// DivergingEpoch is set when LastFetchedEpoch shows the fetcher's log
	// diverged from this one; Records is then empty.
	DivergingEpoch *EpochEndOffset
	// AbortedTransactions are, for a read_committed read
	// (IsolationCommitted) that returned records, the aborted transactions
	// overlapping them, from the transaction index: the consumer drops
	// their batches.
	AbortedTransactions []commitlog.AbortedTxn
}

// ReadRecords reads for a fetch: checks leadership and epochs, detects a
// diverging log from the last fetched epoch, and reads whole batches from
// the fetch offset up to the isolation's bound.
func (p *Partition) ReadRecords(o ReadOptions) (ReadResult, error) {
	p.mu.Lock()
	if err := p.checkLeaderLocked(o.CurrentLeaderEpoch, o.RequireLeader); err != nil {
		p.mu.Unlock()
		return ReadResult{}, err
	}
	res := ReadResult{
		HighWatermark:    p.mu.highWatermark,
		LastStableOffset: p.lastStableOffsetLocked(),
		LogStartOffset:   p.log.LogStartOffset(),
		LogEndOffset:     p.log.LogEndOffset(),
	}
	p.mu.Unlock()

	if o.LastFetchedEpoch >= 0 {
		found, end := p.log.EndOffsetForEpoch(o.LastFetchedEpoch)
		if found == epoch.UndefinedEpoch || end == epoch.UndefinedEpochOffset {
			return res, fmt.Errorf("partition %s: no end offset for last fetched epoch %d: %w", p.tp, o.LastFetchedEpoch, kerr.OffsetOutOfRange)
		}
		if o.FetchOffset < res.LogStartOffset {
			return res, fmt.Errorf("partition %s: fetch offset %d below log start offset %d: %w", p.tp, o.FetchOffset, res.LogStartOffset, kerr.OffsetOutOfRange)
		}
		if found < o.LastFetchedEpoch || end < o.FetchOffset {
			res.DivergingEpoch = &EpochEndOffset{Epoch: found, EndOffset: end}
			return res, nil
		}
	}

	var maxOffset int64
	switch o.Isolation {
	case IsolationCommitted:
		maxOffset = res.LastStableOffset
	case IsolationLogEnd:
		maxOffset = res.LogEndOffset
	default:
		maxOffset = res.HighWatermark
	}
	recs, err := p.log.Read(o.FetchOffset, o.MaxBytes, maxOffset, o.MinOneBatch)
	if err != nil {
		if errors.Is(err, commitlog.ErrOffsetOutOfRange) {
			return res, fmt.Errorf("partition %s: fetch offset %d outside [%d, %d]: %w",
				p.tp, o.FetchOffset, res.LogStartOffset, res.LogEndOffset, kerr.OffsetOutOfRange)
		}
		return res, fmt.Errorf("partition %s: read at %d: %w", p.tp, o.FetchOffset, err)
	}
	res.Records = recs
	if o.Isolation == IsolationCommitted && recs.Size > 0 {
		// Kafka's LocalLog.addAbortedTransactions: from the offset asked for
		// to the end of what is returned.
		aborted, err := p.log.CollectAbortedTxns(o.FetchOffset, recs.EndOffset)
		if err != nil {
			return res, fmt.Errorf("partition %s: aborted transactions from %d: %w", p.tp, o.FetchOffset, err)
		}
		res.AbortedTransactions = aborted
	}
	return res, nil
}

// ListOffsets special timestamps beyond those of package kafka.
const (
	ListOffsetsEarliestLocal         int64 = -4 // KIP-405: local log start
	ListOffsetsLatestTiered          int64 = -5 // KIP-1005: highest tiered offset
	ListOffsetsEarliestPendingUpload int64 = -6 // KIP-1023: first offset not yet tiered
)

// OffsetAnswer is a ListOffsets answer; Offset -1 means none was found.
type OffsetAnswer struct {
	Timestamp   int64
	Offset      int64
	LeaderEpoch int32
}

var notFound = OffsetAnswer{Timestamp: kafka.NoTimestamp, Offset: kafka.NoOffset, LeaderEpoch: kafka.NoEpoch}

// ListOffset answers ListOffsets for one partition as Kafka's
// fetchOffsetForTimestamp does: the special timestamps, then a time index
// lookup; answers at or beyond the isolation's bound are "not found".
// A client request (isClient) is refused with OFFSET_NOT_AVAILABLE while the
// high watermark lags the start of this leader's epoch.
func (p *Partition) ListOffset(timestamp int64, iso Isolation, currentLeaderEpoch int32, isClient bool) (OffsetAnswer, error) {
	p.mu.Lock()
	if err := p.checkLeaderLocked(currentLeaderEpoch, true); err != nil {
		p.mu.Unlock()
		return notFound, err
	}
	var lastFetchable int64
	switch iso {
	case IsolationCommitted:
		lastFetchable = p.lastStableOffsetLocked()
	case IsolationLogEnd:
		lastFetchable = p.log.LogEndOffset()
	default:
		lastFetchable = p.mu.highWatermark
	}
	var notAvailable error
	if isClient && p.mu.leaderEpochStartOffset > p.mu.highWatermark {
		notAvailable = fmt.Errorf("partition %s: high watermark %d behind leader epoch start %d: %w",
			p.tp, p.mu.highWatermark, p.mu.leaderEpochStartOffset, kerr.OffsetNotAvailable)
	}
	leaderEpoch := p.mu.leaderEpoch
	p.mu.Unlock()

	switch timestamp {
	case kafka.ListOffsetsLatest:
		if notAvailable != nil {
			return notFound, notAvailable
		}
		return OffsetAnswer{Timestamp: kafka.NoTimestamp, Offset: lastFetchable, LeaderEpoch: leaderEpoch}, nil
	case kafka.ListOffsetsEarliest, ListOffsetsEarliestLocal:
		// Without tiered storage the local log is the whole log.
		start := p.log.LogStartOffset()
		return OffsetAnswer{Timestamp: kafka.NoTimestamp, Offset: start, LeaderEpoch: p.epochFor(start)}, nil
	case ListOffsetsLatestTiered, ListOffsetsEarliestPendingUpload:
		// Kafka answers these with no offset when remote storage is off.
		return notFound, nil
	}
	var (
		found TimestampOffset
		ok    bool
		err   error
	)
	if timestamp == kafka.ListOffsetsMaxTimestamp {
		found, ok, err = p.log.LastTimestampOffset()
	} else {
		found, ok, err = p.log.OffsetForTimestamp(timestamp)
	}
	if err != nil {
		return notFound, fmt.Errorf("partition %s: list offsets for timestamp %d: %w", p.tp, timestamp, err)
	}
	if !ok || found.Offset >= lastFetchable {
		if notAvailable != nil {
			return notFound, notAvailable
		}
		return notFound, nil
	}
	return OffsetAnswer{Timestamp: found.Timestamp, Offset: found.Offset, LeaderEpoch: p.epochFor(found.Offset)}, nil
}

// TimestampOffset is commitlog's answer to a timestamp lookup.
type TimestampOffset = commitlog.TimestampOffset

// epochFor is the leader epoch that wrote offset, -1 if unknown: the
// partition leader epoch of the batch holding it, read from the log (the
// log's epoch cache has no lookup by offset).
func (p *Partition) epochFor(offset int64) int32 {
	res, err := p.log.Read(offset, 1, p.log.LogEndOffset(), true)
	if err != nil || res.Size == 0 {
		return kafka.NoEpoch
	}
	data, err := res.Bytes()
	if err != nil {
		return kafka.NoEpoch
	}
	h, err := records.ParseHeader(data)
	if err != nil {
		return kafka.NoEpoch
	}
	return h.PartitionLeaderEpoch
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest epoch at or
// below leaderEpoch in this log and where it ends. requireLeader is true
// for consumers (replica id -1), which only the leader answers.
func (p *Partition) EndOffsetForEpoch(currentLeaderEpoch, leaderEpoch int32, requireLeader bool) (EpochEndOffset, error) {
	p.mu.Lock()
	err := p.checkLeaderLocked(currentLeaderEpoch, requireLeader)
	p.mu.Unlock()
	if err != nil {
		return EpochEndOffset{Epoch: epoch.UndefinedEpoch, EndOffset: epoch.UndefinedEpochOffset}, err
	}
	e, off := p.log.EndOffsetForEpoch(leaderEpoch)
	if off == epoch.UndefinedEpochOffset {
		return EpochEndOffset{Epoch: epoch.UndefinedEpoch, EndOffset: epoch.UndefinedEpochOffset}, nil
	}
	return EpochEndOffset{Epoch: e, EndOffset: off}, nil
}

// DeleteRecordsOnLeader raises the log start offset to offset (-1: the high
// watermark) for DeleteRecords and returns the new low watermark. An offset
// beyond the high watermark is OFFSET_OUT_OF_RANGE; a topic without the
// delete cleanup policy refuses with POLICY_VIOLATION, as Kafka.
func (p *Partition) DeleteRecordsOnLeader(offset int64, cfg TopicConfig) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkLeaderLocked(-1, true); err != nil {
		return kafka.NoOffset, err
	}
	if !cfg.Delete {
		return kafka.NoOffset, fmt.Errorf("partition %s: records cannot be deleted from a topic whose cleanup.policy lacks delete: %w",
			p.tp, kerr.PolicyViolation)
	}
	if offset == -1 {
		offset = p.mu.highWatermark
	}
	if offset < 0 || offset > p.mu.highWatermark {
		return kafka.NoOffset, fmt.Errorf("partition %s: delete before %d, beyond high watermark %d: %w",
			p.tp, offset, p.mu.highWatermark, kerr.OffsetOutOfRange)
	}
	if offset > p.log.LogStartOffset() {
		// The log trims its own leader epoch cache with it.
		if err := p.log.IncrementLogStartOffset(offset); err != nil {
			return kafka.NoOffset, fmt.Errorf("partition %s: raise log start offset to %d: %w", p.tp, offset, err)
		}
	}
	return p.log.LogStartOffset(), nil
}
