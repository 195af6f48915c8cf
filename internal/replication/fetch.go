package replication

import (
	"context"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// FetchParams are a fetch request's request-wide settings.
type FetchParams struct {
	// ReplicaID is -1 for consumers, a broker id for followers.
	ReplicaID int32
	// ReplicaEpoch is a follower's broker epoch (Fetch v15+ ReplicaState,
	// KIP-903), -1 when the request does not carry it.
	ReplicaEpoch int64
	MaxWait      time.Duration
	MinBytes     int32
	// MaxBytes bounds the whole response (fetch.max.bytes); the first batch
	// of the first partition with data is returned whole even above it.
	MaxBytes  int32
	Isolation Isolation
}

// FetchPartition is one partition of a fetch request.
type FetchPartition struct {
	TP                 kafka.TopicPartition
	FetchOffset        int64
	CurrentLeaderEpoch int32
	LastFetchedEpoch   int32
	MaxBytes           int32
}

// FetchPartitionResult is one partition's fetch answer.
type FetchPartitionResult struct {
	TP kafka.TopicPartition
	// Err is nil on success; ErrorCode maps it to the response's code.
	Err error
	ReadResult
	// part is the partition read (nil when not hosted), for the metrics.
	part *Partition
}

// Fetch reads every partition in request order, sharing MaxBytes between
// them (KIP-74), and long-polls: when less than MinBytes is available and
// no partition failed, it waits in the purgatory up to MaxWait for appends
// to any of the partitions, then reads again.
//
// The bytes the answer carries are counted by CountFetchedBytes, which the
// Fetch handler calls once it sends them.
func (rm *ReplicaManager) Fetch(ctx context.Context, params FetchParams, parts []FetchPartition) []FetchPartitionResult {
	var lq ReplicaQuota
	if params.ReplicaID >= 0 {
		lq = activeQuota(rm.replicas.opts.LeaderQuota)
	}
	results, enough := rm.readAll(params, parts, lq)
	rm.metrics.topics.countFetchRequests(results)
	if enough || params.MaxWait <= 0 || len(parts) == 0 {
		if lq != nil {
			recordLeaderThrottled(lq, results)
		}
		return results
	}
	keys := make([]kafka.TopicPartition, len(parts))
	for i, fp := range parts {
		keys[i] = fp.TP
	}
	// Completed, expired, cancelled or closed: the last read is the answer
	// in every case (a cancelled request's answer is never sent).
	_, _ = rm.fetchWaits.Wait(ctx, keys, params.MaxWait, func() bool {
		results, enough = rm.readAll(params, parts, lq)
		return enough
	})
	if lq != nil {
		recordLeaderThrottled(lq, results)
	}
	return results
}

// readAll reads each partition once and reports whether the answer is
// ready: MinBytes reached, or an error or diverging epoch to report. A
// follower's throttled partitions (lq, nil when none) read nothing while
// the leader quota is exceeded, and so count nothing towards MinBytes, as
// Kafka's DelayedFetch leaves them out.
func (rm *ReplicaManager) readAll(params FetchParams, parts []FetchPartition, lq ReplicaQuota) ([]FetchPartitionResult, bool) {
	results := make([]FetchPartitionResult, len(parts))
	remaining := params.MaxBytes
	var total int64
	urgent := false
	for i, fp := range parts {
		results[i].TP = fp.TP
		p, err := rm.Partition(fp.TP)
		if err != nil {
			results[i].Err = err
			results[i].ReadResult = emptyRead()
			urgent = true
			continue
		}
		results[i].part = p
		iso := params.Isolation
		if params.ReplicaID >= 0 {
			// A follower's fetch offset is its log end offset: it may move
			// the high watermark before the read.
			moved, change, err := p.UpdateFollowerFetchState(params.ReplicaID, params.ReplicaEpoch, fp.FetchOffset)
			if change != nil {
				rm.sendISRChange(p, *change)
			}
			if err != nil {
				results[i].Err = err
				results[i].ReadResult = emptyRead()
				urgent = true
				continue
			}
			if moved {
				rm.highWatermarkMoved(fp.TP)
			}
			iso = IsolationLogEnd
		}
		limit, minOne := min(fp.MaxBytes, max(remaining, 0)), total == 0
		if lq != nil && p.shouldLeaderThrottle(lq, params.ReplicaID) {
			// Offsets, epochs and errors as usual; no records.
			limit, minOne = 0, false
		}
		res, err := p.ReadRecords(ReadOptions{
			FetchOffset:        fp.FetchOffset,
			CurrentLeaderEpoch: fp.CurrentLeaderEpoch,
			LastFetchedEpoch:   fp.LastFetchedEpoch,
			MaxBytes:           limit,
			MinOneBatch:        minOne,
			Isolation:          iso,
			RequireLeader:      true,
		})
		results[i].ReadResult = res
		if err != nil {
			results[i].Err = err
			urgent = true
			continue
		}
		if res.DivergingEpoch != nil {
			urgent = true
		}
		total += res.Records.Size
		remaining -= int32(min(res.Records.Size, int64(remaining)))
	}
	return results, urgent || total >= int64(params.MinBytes)
}

func emptyRead() ReadResult {
	return ReadResult{HighWatermark: kafka.NoOffset, LastStableOffset: kafka.NoOffset, LogStartOffset: kafka.NoOffset, LogEndOffset: kafka.NoOffset}
}
