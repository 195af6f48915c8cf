package replication

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/clock"
	"github.com/sluice-io/sluice/internal/kafka"
)

var errNoAlterPartition = errors.New("replication: no AlterPartition sender configured")

// runFetcher is one fetcher goroutine: it fetches, for every partition this
// broker follows whose leader and index match key, from the leader in one
// Fetch request, and applies the answers, until its ctx ends (the leader
// no longer leads anything this broker follows through it, or Close).
func (r *replicaRuntime) runFetcher(ctx context.Context, key fetcherKey, wake <-chan struct{}) {
	defer r.wg.Done()
	logger := r.rm.logger.With("fetcher_leader", key.leader, "fetcher_index", key.index)
	// delayed holds partitions the leader refused (not leader yet, fenced
	// epoch): they wait a backoff, or the next metadata change, to retry.
	delayed := make(map[kafka.TopicPartition]time.Time)
	for ctx.Err() == nil {
		positions := r.positions(key, delayed, activeQuota(r.opts.FollowerQuota))
		if len(positions) == 0 {
			// Nothing to fetch, or every partition throttled: Kafka's
			// fetcher backs off replica.fetch.backoff.ms alike.
			if !sleep(ctx, r.clk, wake, r.opts.FetchBackoff) {
				return
			}
			clear(delayed)
			continue
		}
		req := ReplicaFetchRequest{ReplicaID: r.rm.opts.BrokerID, BrokerEpoch: r.opts.BrokerEpoch(),
			MaxWait: r.opts.FetchWaitMax, MinBytes: r.opts.FetchMinBytes, MaxBytes: r.opts.FetchResponseMaxBytes}
		byTP := make(map[kafka.TopicPartition]fetchPosition, len(positions))
		for _, pos := range positions {
			byTP[pos.tp] = pos
			req.Partitions = append(req.Partitions, ReplicaFetchPartition{TP: pos.tp, TopicID: pos.topicID,
				FetchOffset: pos.fetchOffset, CurrentLeaderEpoch: pos.leaderEpoch,
				LastFetchedEpoch: pos.lastFetchedEpoch, MaxBytes: r.opts.FetchMaxBytes})
		}
		results, err := r.opts.Transport.FetchFromLeader(ctx, key.leader, req)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			logger.Debug("fetch from leader failed", "err", err)
			if !sleep(ctx, r.clk, wake, r.opts.FetchBackoff) {
				return
			}
			continue
		}
		for _, res := range results {
			pos, ok := byTP[res.TP]
			if !ok {
				continue
			}
			if retry := r.applyFetched(pos, res, logger); retry {
				delayed[res.TP] = r.clk.Now().Add(r.opts.FetchBackoff)
			}
		}
	}
}

// positions returns the fetch positions of the partitions of key not
// waiting out a refusal, leaving out those the follower quota q (nil:
// none throttled) holds back, as ReplicaFetcherThread.buildFetch does.
func (r *replicaRuntime) positions(key fetcherKey, delayed map[kafka.TopicPartition]time.Time, q ReplicaQuota) []fetchPosition {
	var out []fetchPosition
	now := r.clk.Now()
	for _, p := range r.rm.Partitions() {
		pos, ok := p.followerPosition()
		if !ok || r.keyFor(pos) != key {
			continue
		}
		if until, ok := delayed[pos.tp]; ok && now.Before(until) {
			continue
		}
		delete(delayed, pos.tp)
		if shouldFollowerThrottle(q, pos) {
			continue
		}
		out = append(out, pos)
	}
	return out
}

// applyFetched applies one partition's answer. It reports whether the
// partition should wait a backoff before the next fetch.
func (r *replicaRuntime) applyFetched(pos fetchPosition, res ReplicaFetchResult, logger *slog.Logger) bool {
	p, err := r.rm.Partition(pos.tp)
	if err != nil {
		return true
	}
	switch res.ErrorCode {
	case 0:
		if res.DivergingEpoch != nil {
			if _, err := p.truncateForDivergence(pos.leaderEpoch, *res.DivergingEpoch); err != nil {
				logger.Warn("truncation failed", "partition", pos.tp.String(), "err", err)
				return true
			}
			return false
		}
		if err := p.appendAsFollower(pos.leaderEpoch, res.Records, res.HighWatermark, res.LogStartOffset); err != nil {
			logger.Warn("follower append failed", "partition", pos.tp.String(), "err", err)
			return true
		}
		r.rm.metrics.followerFetched(p, len(res.Records), res.HighWatermark)
		if q := r.opts.FollowerQuota; q != nil && len(res.Records) > 0 && q.IsThrottled(pos.tp) {
			q.Record(int64(len(res.Records)))
		}
		// Consumers long-polling this follower (none without KIP-392)
		// and acks waits are keyed by partition; wake them all alike.
		r.rm.highWatermarkMoved(pos.tp)
		return false
	case kerr.OffsetOutOfRange.Code:
		ctx, cancel := context.WithTimeout(r.ctx, r.opts.ReplicaLagTimeMax)
		start, end, err := r.opts.Transport.LeaderLogOffsets(ctx, pos.leaderID, r.rm.opts.BrokerID, pos.tp, pos.leaderEpoch)
		cancel()
		if err != nil {
			logger.Debug("leader log offsets unavailable", "partition", pos.tp.String(), "err", err)
			return true
		}
		if err := p.truncateAfterOutOfRange(pos.leaderEpoch, start, end); err != nil {
			logger.Warn("out-of-range recovery failed", "partition", pos.tp.String(), "err", err)
			return true
		}
		return false
	default:
		// NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH,
		// UNKNOWN_TOPIC_OR_PARTITION...: one side's metadata is behind;
		// wait for it to catch up.
		logger.Debug("leader refused fetch", "partition", pos.tp.String(), "code", res.ErrorCode)
		return true
	}
}

// sleep waits d on clk, or until woken (a nil wake never wakes); it
// reports false when ctx ended.
func sleep(ctx context.Context, clk clock.Clock, wake <-chan struct{}, d time.Duration) bool {
	t := clk.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-wake:
		return true
	case <-t.C():
		return true
	}
}
