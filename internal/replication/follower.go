package replication

import (
	"fmt"

	"github.com/sluice-io/sluice/internal/commitlog/epoch"
	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/records"
)

// fetchPosition is what a follower asks its leader for one partition.
type fetchPosition struct {
	tp               kafka.TopicPartition
	topicID          kafka.UUID
	leaderID         int32
	leaderEpoch      int32
	fetchOffset      int64
	lastFetchedEpoch int32
	// inSync: the last fetch reached the leader's high watermark (not
	// throttled on the follower side).
	inSync bool
}

// followerPosition returns the partition's next fetch when this broker
// follows a known leader; false when it leads, or has no leader to fetch
// from, or its log is offline.
func (p *Partition) followerPosition() (fetchPosition, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != RoleFollower || p.mu.leaderID < 0 || p.log.Offline() {
		return fetchPosition{}, false
	}
	last := kafka.NoEpoch
	if e, ok := p.log.LatestEpoch(); ok {
		last = e
	}
	return fetchPosition{tp: p.tp, topicID: p.topicID, leaderID: p.mu.leaderID, leaderEpoch: p.mu.leaderEpoch,
		fetchOffset: p.log.LogEndOffset(), lastFetchedEpoch: last, inSync: p.mu.caughtUp}, true
}

// stillFollowingLocked tells whether a fetch answer sent for leaderEpoch
// still applies: the leadership may have changed while it was in flight.
func (p *Partition) stillFollowingLocked(leaderEpoch int32) bool {
	return p.mu.role == RoleFollower && p.mu.leaderEpoch == leaderEpoch
}

// appendAsFollower appends the leader's batches (kept as they are: offsets,
// epochs, CRCs) and takes the leader's high watermark and log start offset,
// as far as this log reaches. An answer for an older leader epoch is
// ignored. Batches the log already holds (a retried fetch) are skipped.
func (p *Partition) appendAsFollower(leaderEpoch int32, batches []byte, leaderHW, leaderLogStart int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stillFollowingLocked(leaderEpoch) {
		return nil
	}
	leo := p.log.LogEndOffset()
	// Whole batches only; a trailing partial batch is left for the next fetch.
	start, pos := -1, 0
	end, err := records.Batches(batches, func(h records.Header, b []byte) error {
		if start < 0 && h.NextOffset() > leo {
			start = pos
		}
		pos += len(b)
		return nil
	})
	if err != nil {
		return fmt.Errorf("partition %s: batches from leader: %w", p.tp, err)
	}
	var fresh []byte
	if start >= 0 {
		fresh = batches[start:end]
	}
	if len(fresh) > 0 {
		if _, err := p.log.AppendAsFollower(fresh); err != nil {
			return fmt.Errorf("partition %s: append as follower at %d: %w", p.tp, leo, err)
		}
	}
	leo = p.log.LogEndOffset()
	p.mu.caughtUp = leaderHW <= leo
	if leaderLogStart > p.log.LogStartOffset() && leaderLogStart <= leo {
		if err := p.log.IncrementLogStartOffset(leaderLogStart); err != nil {
			return fmt.Errorf("partition %s: follow leader's log start offset %d: %w", p.tp, leaderLogStart, err)
		}
	}
	if hw := min(leaderHW, leo); hw > p.mu.highWatermark {
		p.mu.highWatermark = hw
		p.log.SetHighWatermark(hw)
	}
	return nil
}

// truncateForDivergence cuts the log where it stops agreeing with the
// leader, from the Fetch response's diverging epoch (Kafka's
// getOffsetTruncationState): when this log knows the leader's epoch, up to
// where the leader ended it; otherwise down to where this log's own epoch
// at or below it ends, and the next fetch's last fetched epoch narrows it
// further. It returns the new log end offset.
func (p *Partition) truncateForDivergence(leaderEpoch int32, div EpochEndOffset) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	leo := p.log.LogEndOffset()
	if !p.stillFollowingLocked(leaderEpoch) {
		return leo, nil
	}
	var target int64
	switch {
	case div.EndOffset == epoch.UndefinedEpochOffset:
		target = p.mu.highWatermark
	case div.Epoch == epoch.UndefinedEpoch:
		target = min(div.EndOffset, leo)
	default:
		localEpoch, localEnd := p.log.EndOffsetForEpoch(div.Epoch)
		if localEpoch != epoch.UndefinedEpoch && localEpoch != div.Epoch {
			target = min(localEnd, leo)
		} else {
			target = min(div.EndOffset, leo)
		}
	}
	return p.truncateLocked(target)
}

// truncateAfterOutOfRange handles OFFSET_OUT_OF_RANGE from the leader,
// given the leader's log start and end offsets: a log behind the leader's
// log start offset restarts empty there; one ahead of the leader's end (a
// former leader's unreplicated tail) is cut to it, as Kafka's follower does.
func (p *Partition) truncateAfterOutOfRange(leaderEpoch int32, leaderLogStart, leaderLogEnd int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stillFollowingLocked(leaderEpoch) {
		return nil
	}
	leo := p.log.LogEndOffset()
	if leo < leaderLogStart {
		p.logger.Info("log behind the leader's log start offset; restarting it there", "log_end_offset", leo, "leader_log_start_offset", leaderLogStart)
		if err := p.log.TruncateFullyAndStartAt(leaderLogStart); err != nil {
			return fmt.Errorf("partition %s: restart log at leader's log start offset %d: %w", p.tp, leaderLogStart, err)
		}
		p.mu.highWatermark = leaderLogStart
		p.log.SetHighWatermark(leaderLogStart)
		return nil
	}
	if leo > leaderLogEnd {
		_, err := p.truncateLocked(leaderLogEnd)
		return err
	}
	return nil
}

// truncateLocked cuts the log at offset and keeps the high watermark within it.
func (p *Partition) truncateLocked(offset int64) (int64, error) {
	if offset < p.log.LogEndOffset() {
		p.logger.Info("truncating diverged log", "offset", offset, "log_end_offset", p.log.LogEndOffset(), "leader_epoch", p.mu.leaderEpoch)
		if err := p.log.TruncateTo(offset); err != nil {
			return p.log.LogEndOffset(), fmt.Errorf("partition %s: truncate to %d: %w", p.tp, offset, err)
		}
	}
	leo := p.log.LogEndOffset()
	if p.mu.highWatermark > leo {
		p.mu.highWatermark = leo
		p.log.SetHighWatermark(leo)
	}
	return leo, nil
}
