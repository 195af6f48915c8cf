package replication

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/commitlog"
	"github.com/sluice-io/sluice/internal/kafka"
)

// TxnMarker is one transaction marker for partitions of this broker (an
// entry of WriteTxnMarkers).
type TxnMarker struct {
	ProducerID    int64
	ProducerEpoch int16
	// Commit is true for COMMIT, false for ABORT.
	Commit           bool
	CoordinatorEpoch int32
	// TransactionVersion is the marker's (WriteTxnMarkers v2+, KIP-890):
	// from 2 its epoch must be above the producer's; 0 before v2.
	TransactionVersion int16
	Partitions         []kafka.TopicPartition
}

// TxnMarkerResult is one partition's outcome of a marker.
type TxnMarkerResult struct {
	TP kafka.TopicPartition
	// Err is nil once the marker is in the log and the high watermark has
	// passed it; ErrorCode maps it.
	Err error
	// Offset is the marker's offset (-1 on error).
	Offset int64
}

// AppendTxnMarkers appends each marker's COMMIT or ABORT control batch to
// its partitions as their leader, as the coordinator's write (Kafka's
// KafkaApis.handleWriteTxnMarkersRequest over appendRecords with
// AppendOrigin.COORDINATOR and acks=all): a stale producer epoch is
// INVALID_PRODUCER_EPOCH, a stale coordinator epoch
// TRANSACTION_COORDINATOR_FENCED, a partition this broker does not host
// UNKNOWN_TOPIC_OR_PARTITION, a follower NOT_LEADER_OR_FOLLOWER, an ISR
// below min.insync.replicas NOT_ENOUGH_REPLICAS. It returns once the high
// watermark has passed every appended marker, or timeout or ctx ends
// (REQUEST_TIMED_OUT for the markers still short). Results are per marker
// and partition, in request order.
func (rm *ReplicaManager) AppendTxnMarkers(ctx context.Context, timeout time.Duration, markers []TxnMarker) [][]TxnMarkerResult {
	var (
		flat   []PartitionAppendResult
		parts  []*Partition
		minISR []int
	)
	for _, m := range markers {
		cm := commitlog.TxnMarker{ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Commit: m.Commit,
			CoordinatorEpoch: m.CoordinatorEpoch, TxnVersion: m.TransactionVersion}
		for _, tp := range m.Partitions {
			r := PartitionAppendResult{TP: tp}
			p, err := rm.Partition(tp)
			if err != nil {
				r.AppendResult = failedAppend(markerPartitionError(tp, err), kafka.NoOffset)
				flat, parts, minISR = append(flat, r), append(parts, nil), append(minISR, 0)
				continue
			}
			cfg := p.TopicConfig()
			res, moved := p.appendTxnMarker(cm, cfg)
			r.AppendResult = res
			if res.Err == nil {
				rm.fetchWaits.Notify(tp)
			}
			if moved {
				rm.highWatermarkMoved(tp)
			}
			flat, parts, minISR = append(flat, r), append(parts, p), append(minISR, cfg.MinInsyncReplicas)
		}
	}
	rm.awaitAcks(ctx, timeout, flat, parts, minISR)
	out := make([][]TxnMarkerResult, len(markers))
	i := 0
	for mi, m := range markers {
		out[mi] = make([]TxnMarkerResult, len(m.Partitions))
		for pi := range m.Partitions {
			r := flat[i]
			out[mi][pi] = TxnMarkerResult{TP: r.TP, Err: r.Err, Offset: r.FirstOffset}
			if r.Err != nil {
				out[mi][pi].Offset = kafka.NoOffset
			}
			i++
		}
	}
	return out
}

// markerPartitionError is Kafka's answer for a marker's partition this
// broker cannot write: one it does not host at all (no local log) is
// UNKNOWN_TOPIC_OR_PARTITION, which the coordinator retries after
// refreshing the leader; a failed log keeps KAFKA_STORAGE_ERROR.
func markerPartitionError(tp kafka.TopicPartition, err error) error {
	if errors.Is(err, kerr.NotLeaderForPartition) {
		return fmt.Errorf("partition %s: no replica on this broker: %w", tp, kerr.UnknownTopicOrPartition)
	}
	return err
}

// appendTxnMarker appends a marker as leader, checking min.insync.replicas
// as acks=all does. It reports whether the high watermark moved.
func (p *Partition) appendTxnMarker(m commitlog.TxnMarker, cfg TopicConfig) (AppendResult, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.checkAppendableLocked(-1, cfg); err != nil {
		return failedAppend(err, p.log.LogStartOffset()), false
	}
	info, err := p.log.AppendTxnMarker(m, p.mu.leaderEpoch)
	if err != nil {
		if errors.Is(err, commitlog.ErrOffline) {
			p.logger.Error("marker append failed: log directory offline", "err", err)
		}
		return failedAppend(fmt.Errorf("partition %s: append transaction marker of producer %d: %w", p.tp, m.ProducerID, err), p.log.LogStartOffset()), false
	}
	moved := p.maybeIncrementHighWatermarkLocked()
	return AppendResult{FirstOffset: info.FirstOffset, LastOffset: info.LastOffset, LogAppendTimeMs: -1,
		LogStartOffset: info.LogStartOffset}, moved
}

// ProducerState is one active producer of a partition, as DescribeProducers
// reports it.
type ProducerState struct {
	ProducerID    int64
	ProducerEpoch int16
	// LastSequence is the last sequence written (-1 if none).
	LastSequence int32
	// LastTimestamp is the max timestamp of its last batch or marker.
	LastTimestamp    int64
	CoordinatorEpoch int32
	// CurrentTxnStartOffset is the first offset of its open transaction, -1
	// when none.
	CurrentTxnStartOffset int64
}

// ActiveProducers answers DescribeProducers for one partition hosted here,
// leader or follower (Kafka's Partition.activeProducerState): its
// producers by id. The error is the partition's (UNKNOWN_TOPIC_OR_PARTITION,
// NOT_LEADER_OR_FOLLOWER when not hosted, KAFKA_STORAGE_ERROR).
func (rm *ReplicaManager) ActiveProducers(tp kafka.TopicPartition) ([]ProducerState, error) {
	p, err := rm.Partition(tp)
	if err != nil {
		return nil, err
	}
	if err := p.log.OfflineErr(); err != nil {
		return nil, fmt.Errorf("partition %s: %w: %w", tp, kerr.KafkaStorageError, err)
	}
	entries := p.log.ActiveProducers()
	out := make([]ProducerState, len(entries))
	for i, e := range entries {
		out[i] = ProducerState{ProducerID: e.ProducerID, ProducerEpoch: e.ProducerEpoch, LastSequence: e.LastSeq(),
			LastTimestamp: e.LastTimestamp, CoordinatorEpoch: e.CoordinatorEpoch, CurrentTxnStartOffset: e.CurrentTxnFirstOffset}
	}
	return out, nil
}
