package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// produceVersion is the Produce version internal appends claim (any v3+
// takes v2 batches; none of ours is zstd).
const produceVersion int16 = 9

// ReplicaWriter is the PartitionWriter over the broker's replica manager,
// for the partitions of Topic.
type ReplicaWriter struct {
	Replicas *replication.ReplicaManager
	Topic    string
}

var _ PartitionWriter = ReplicaWriter{}

// Append appends with acks=all, waiting in the replica manager's purgatory.
// A transactional batch (Write.Transaction) goes as it is, its header
// naming the producer. Every write is a coordinator's (Kafka's
// AppendOrigin.COORDINATOR: the producer epoch checked, not the sequence,
// which is 0 in every transactional batch, and no KIP-890 verification).
func (w ReplicaWriter) Append(ctx context.Context, partition int32, batch []byte) (int64, error) {
	tp := kafka.TopicPartition{Topic: w.Topic, Partition: partition}
	timeout := replicaWaitTimeout(ctx)
	res := w.Replicas.AppendRecords(ctx, replication.AppendRequest{
		RequiredAcks: -1, Timeout: timeout, ProduceVersion: produceVersion,
		Origin:     replication.AppendOriginCoordinator,
		Partitions: []replication.AppendPartition{{TP: tp, Records: batch}},
	})
	if len(res) != 1 {
		return 0, errors.New("replica manager answered no partition")
	}
	if res[0].Err != nil {
		return 0, fmt.Errorf("appending to %s: %w", tp, res[0].Err)
	}
	return res[0].LastOffset, nil
}

// Read reads the leader's log up to its end (see PartitionWriter.Read); it
// fails until the replica manager has made this node the leader, so a shard
// never loads from a follower's log that may still be truncated.
func (w ReplicaWriter) Read(_ context.Context, partition int32, offset int64, maxBytes int32) ([]byte, int64, error) {
	tp := kafka.TopicPartition{Topic: w.Topic, Partition: partition}
	p, err := w.Replicas.Partition(tp)
	if err != nil {
		return nil, 0, fmt.Errorf("opening %s: %w", tp, err)
	}
	st := p.Log()
	if start := st.LogStartOffset(); offset < start {
		offset = start
	}
	res, err := p.ReadRecords(replication.ReadOptions{
		FetchOffset: offset, CurrentLeaderEpoch: kafka.NoEpoch, LastFetchedEpoch: kafka.NoEpoch,
		MaxBytes: maxBytes, MinOneBatch: true, Isolation: replication.IsolationLogEnd,
		RequireLeader: true,
	})
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s at %d: %w", tp, offset, err)
	}
	buf, err := res.Records.Bytes()
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s at %d: %w", tp, offset, err)
	}
	return buf, res.LogEndOffset, nil
}

// replicaWaitTimeout is the time left before ctx's deadline (the shard
// always sets one), the acks=all wait's bound.
func replicaWaitTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), time.Millisecond)
	}
	return 5 * time.Second
}
