package replication

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/records"
)

// AppendResult is the outcome of one partition's produce append.
type AppendResult struct {
	// Err is nil on success; ErrorCode maps it to the response's code.
	Err error
	// RecordErrors and ErrorMessage detail a refused batch (KIP-467).
	RecordErrors []records.RecordError
	ErrorMessage string
	// FirstOffset and LastOffset are the offsets the records got (for a
	// duplicate idempotent batch, the original's).
	FirstOffset int64
	LastOffset  int64
	// LogAppendTimeMs is the broker's timestamp when the topic uses
	// LogAppendTime, else -1.
	LogAppendTimeMs int64
	LogStartOffset  int64
}

// failedAppend is an AppendResult carrying only an error.
func failedAppend(err error, logStartOffset int64) AppendResult {
	r := AppendResult{Err: err, FirstOffset: -1, LastOffset: -1, LogAppendTimeMs: -1, LogStartOffset: logStartOffset}
	var ve *records.ValidationError
	if errors.As(err, &ve) {
		r.RecordErrors = ve.RecordErrors
		r.ErrorMessage = ve.Message
	}
	if r.ErrorMessage == "" {
		// A full disk or a lost segment says so (Kafka sends no message).
		r.ErrorMessage = commitlog.ClientMessage(err)
	}
	return r
}

// AppendRecordsToLeader validates a client's batches against the topic's
// rules and appends them with the current leader epoch. For acks=all it
// first checks that the ISR is at least min.insync.replicas
// (NOT_ENOUGH_REPLICAS); waiting for the high watermark is the caller's
// (ReplicaManager.AppendRecords) business. It reports whether the high
// watermark moved, so the caller wakes the waiters. ctx bounds the wait for
// decompression budget. Transactional batches need no verification here
// (ReplicaManager.AppendRecords verifies them when it has a verifier).
func (p *Partition) AppendRecordsToLeader(ctx context.Context, batches []byte, requiredAcks int16, cfg TopicConfig, produceVersion int16) (AppendResult, bool) {
	return p.appendRecordsToLeader(ctx, batches, requiredAcks, cfg, produceVersion, leaderChecks{})
}

func (p *Partition) appendRecordsToLeader(ctx context.Context, batches []byte, requiredAcks int16, cfg TopicConfig, produceVersion int16, checks leaderChecks) (AppendResult, bool) {
	// Kafka's precedence: leadership and min.insync.replicas are refused
	// before the batch is looked at. They are checked again under the lock
	// for the append; validation (decompression included) runs between,
	// unlocked, so concurrent producers overlap.
	if err := p.checkAppendable(requiredAcks, cfg); err != nil {
		return failedAppend(err, p.log.LogStartOffset()), false
	}
	// The log's decoder: the limits its reads apply, and the broker's
	// decompression budget.
	vopts := cfg.validateOptions(p.clk.Now().UnixMilli(), produceVersion)
	vopts.Decoder = p.log.Decoder()
	validated, err := records.Validate(ctx, batches, vopts)
	if err != nil {
		return failedAppend(err, p.log.LogStartOffset()), false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkAppendableLocked(requiredAcks, cfg); err != nil {
		return failedAppend(err, p.log.LogStartOffset()), false
	}
	var info commitlog.AppendInfo
	switch {
	case bugDropAcked(p, batches, &info):
	default:
		// The batches were parsed and CRC-checked once, by Validate.
		la := commitlog.LeaderAppend{Coordinator: checks.origin == AppendOriginCoordinator, Verify: checks.verify, Guard: checks.guard}
		info, err = p.log.AppendValidated(&validated.Validated, p.mu.leaderEpoch, la)
	}
	if err != nil {
		if errors.Is(err, commitlog.ErrOffline) {
			p.logger.Error("append failed: log directory offline", "err", err)
		}
		return failedAppend(fmt.Errorf("partition %s: append: %w", p.tp, err), p.log.LogStartOffset()), false
	}
	bugDuplicate(p, batches)
	moved := p.maybeIncrementHighWatermarkLocked()
	return AppendResult{
		FirstOffset:     info.FirstOffset,
		LastOffset:      info.LastOffset,
		LogAppendTimeMs: validated.LogAppendTimeMs,
		LogStartOffset:  info.LogStartOffset,
	}, moved
}

func (p *Partition) checkAppendable(requiredAcks int16, cfg TopicConfig) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.checkAppendableLocked(requiredAcks, cfg)
}

// checkAppendableLocked refuses an append on a follower, an offline log, or
// for acks=all an ISR below min.insync.replicas (NOT_ENOUGH_REPLICAS).
func (p *Partition) checkAppendableLocked(requiredAcks int16, cfg TopicConfig) error {
	if err := p.checkLeaderLocked(-1, true); err != nil {
		return err
	}
	if requiredAcks == -1 && len(p.mu.isr) < cfg.MinInsyncReplicas {
		return fmt.Errorf("partition %s: ISR %v smaller than min.insync.replicas %d: %w",
			p.tp, p.mu.isr, cfg.MinInsyncReplicas, kerr.NotEnoughReplicas)
	}
	return nil
}

// checkEnoughReplicasReachOffset is acks=all's completion test: done when
// the high watermark has passed requiredOffset (the offset after the
// appended batches); the error is NOT_ENOUGH_REPLICAS_AFTER_APPEND when the
// ISR shrank below min.insync.replicas meanwhile, or the leadership loss.
func (p *Partition) checkEnoughReplicasReachOffset(requiredOffset int64, minInsync int) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.role != RoleLeader {
		return true, fmt.Errorf("partition %s: leadership lost while waiting for acks: %w", p.tp, kerr.NotLeaderForPartition)
	}
	if p.log.Offline() {
		return true, fmt.Errorf("partition %s: %w", p.tp, kerr.KafkaStorageError)
	}
	if p.mu.highWatermark < requiredOffset {
		return false, nil
	}
	if len(p.mu.isr) < minInsync {
		return true, fmt.Errorf("partition %s: ISR %v below min.insync.replicas %d after append: %w",
			p.tp, p.mu.isr, minInsync, kerr.NotEnoughReplicasAfterAppend)
	}
	return true, nil
}
