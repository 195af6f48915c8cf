package replication

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ReplicaFetchRequest is a follower's Fetch to a leader broker: Kafka's
// Fetch request with the replica id (ReplicaState from v15) set.
type ReplicaFetchRequest struct {
	ReplicaID   int32
	BrokerEpoch int64
	MaxWait     time.Duration
	MinBytes    int32
	MaxBytes    int32
	Partitions  []ReplicaFetchPartition
}

// ReplicaFetchPartition is one partition of a follower's fetch.
type ReplicaFetchPartition struct {
	TP                 kafka.TopicPartition
	TopicID            kafka.UUID
	FetchOffset        int64
	CurrentLeaderEpoch int32
	LastFetchedEpoch   int32
	MaxBytes           int32
}

// ReplicaFetchResult is the leader's answer for one partition.
type ReplicaFetchResult struct {
	TP             kafka.TopicPartition
	ErrorCode      int16
	HighWatermark  int64
	LogStartOffset int64
	// DivergingEpoch is set when the follower's log diverged (Fetch v12+).
	DivergingEpoch *EpochEndOffset
	// Records are whole batches, possibly followed by a partial one.
	Records []byte
}

// Transport carries follower fetches to leader brokers. Production uses
// Kafka's Fetch over TCP to the leader's inter-broker listener; tests and
// in-process clusters use LocalTransport, possibly behind a fault injector.
// An error means no answer (connection lost, timeout): the fetcher backs
// off and tries again.
type Transport interface {
	FetchFromLeader(ctx context.Context, leader int32, req ReplicaFetchRequest) ([]ReplicaFetchResult, error)
	// LeaderLogOffsets asks the leader for a partition's log start and log
	// end offsets (ListOffsets earliest and latest with this broker's
	// replica id), after an OFFSET_OUT_OF_RANGE answer, which carries none.
	LeaderLogOffsets(ctx context.Context, leader, replicaID int32, tp kafka.TopicPartition, leaderEpoch int32) (logStart, logEnd int64, err error)
}

// LocalTransport delivers follower fetches to ReplicaManagers in this
// process, as the leader's Fetch handler would.
type LocalTransport struct {
	mu      sync.RWMutex
	brokers map[int32]*ReplicaManager
}

// NewLocalTransport returns a transport with no broker registered.
func NewLocalTransport() *LocalTransport {
	return &LocalTransport{brokers: make(map[int32]*ReplicaManager)}
}

// Register makes rm reachable as broker id (nil makes it unreachable, as a
// crashed broker).
func (t *LocalTransport) Register(id int32, rm *ReplicaManager) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if rm == nil {
		delete(t.brokers, id)
		return
	}
	t.brokers[id] = rm
}

// FetchFromLeader implements Transport.
func (t *LocalTransport) FetchFromLeader(ctx context.Context, leader int32, req ReplicaFetchRequest) ([]ReplicaFetchResult, error) {
	t.mu.RLock()
	rm, ok := t.brokers[leader]
	t.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("broker %d unreachable", leader)
	}
	return rm.FetchForReplica(ctx, req)
}

// LeaderLogOffsets implements Transport.
func (t *LocalTransport) LeaderLogOffsets(_ context.Context, leader, _ int32, tp kafka.TopicPartition, leaderEpoch int32) (int64, int64, error) {
	t.mu.RLock()
	rm, ok := t.brokers[leader]
	t.mu.RUnlock()
	if !ok {
		return 0, 0, fmt.Errorf("broker %d unreachable", leader)
	}
	start, err := rm.ListOffset(tp, kafka.ListOffsetsEarliest, IsolationLogEnd, leaderEpoch, false)
	if err != nil {
		return 0, 0, err
	}
	end, err := rm.ListOffset(tp, kafka.ListOffsetsLatest, IsolationLogEnd, leaderEpoch, false)
	if err != nil {
		return 0, 0, err
	}
	return start.Offset, end.Offset, nil
}

// FetchForReplica serves a follower's fetch on this (leader) broker and
// returns the records as bytes: what the Fetch handler does over the wire.
func (rm *ReplicaManager) FetchForReplica(ctx context.Context, req ReplicaFetchRequest) ([]ReplicaFetchResult, error) {
	parts := make([]FetchPartition, len(req.Partitions))
	for i, p := range req.Partitions {
		parts[i] = FetchPartition{TP: p.TP, FetchOffset: p.FetchOffset, CurrentLeaderEpoch: p.CurrentLeaderEpoch,
			LastFetchedEpoch: p.LastFetchedEpoch, MaxBytes: p.MaxBytes}
	}
	results := rm.Fetch(ctx, FetchParams{ReplicaID: req.ReplicaID, ReplicaEpoch: req.BrokerEpoch, MaxWait: req.MaxWait, MinBytes: req.MinBytes,
		MaxBytes: req.MaxBytes, Isolation: IsolationLogEnd}, parts)
	CountFetchedBytes(true, results)
	out := make([]ReplicaFetchResult, len(results))
	for i, r := range results {
		out[i] = ReplicaFetchResult{TP: r.TP, ErrorCode: ErrorCode(r.Err), HighWatermark: r.HighWatermark,
			LogStartOffset: r.LogStartOffset, DivergingEpoch: r.DivergingEpoch}
		if r.Err != nil {
			// As on the wire: a failed partition carries no offsets.
			out[i].HighWatermark, out[i].LogStartOffset = kafka.NoOffset, kafka.NoOffset
		}
		if r.Err == nil && r.Records.Size > 0 {
			data, err := r.Records.Bytes()
			if err != nil {
				out[i].ErrorCode = kerr.KafkaStorageError.Code
				continue
			}
			out[i].Records = data
		}
	}
	return out, nil
}

var (
	_ Transport = (*LocalTransport)(nil)
	_ Transport = (*KafkaTransport)(nil)
)
