package replication

import (
	"github.com/sluice-io/sluice/internal/kafka"
)

// TopicID returns the id of a topic the metadata knows.
func (rm *ReplicaManager) TopicID(name string) (kafka.UUID, bool) {
	t, ok := rm.image.Load().Topic(name)
	if !ok {
		return kafka.UUID{}, false
	}
	return t.ID, true
}

// TopicName returns the name of a topic the metadata knows by id.
func (rm *ReplicaManager) TopicName(id kafka.UUID) (string, bool) {
	t, ok := rm.image.Load().TopicByID(id)
	if !ok {
		return "", false
	}
	return t.Name, true
}

// ListOffset answers ListOffsets for one partition (see Partition.ListOffset).
func (rm *ReplicaManager) ListOffset(tp kafka.TopicPartition, timestamp int64, iso Isolation, currentLeaderEpoch int32, isClient bool) (OffsetAnswer, error) {
	p, err := rm.Partition(tp)
	if err != nil {
		return notFound, err
	}
	return p.ListOffset(timestamp, iso, currentLeaderEpoch, isClient)
}

// DeleteRecords raises one partition's log start offset (see
// Partition.DeleteRecordsOnLeader) and returns the low watermark. With a
// single replica the answer needs no wait; with followers it will wait for
// their log start offsets, as Kafka's DelayedDeleteRecords.
func (rm *ReplicaManager) DeleteRecords(tp kafka.TopicPartition, offset int64) (int64, error) {
	p, err := rm.Partition(tp)
	if err != nil {
		return kafka.NoOffset, err
	}
	return p.DeleteRecordsOnLeader(offset, p.TopicConfig())
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch for one partition (see
// Partition.EndOffsetForEpoch).
func (rm *ReplicaManager) EndOffsetForEpoch(tp kafka.TopicPartition, currentLeaderEpoch, leaderEpoch int32, requireLeader bool) (EpochEndOffset, error) {
	p, err := rm.Partition(tp)
	if err != nil {
		return EpochEndOffset{Epoch: -1, EndOffset: -1}, err
	}
	return p.EndOffsetForEpoch(currentLeaderEpoch, leaderEpoch, requireLeader)
}

// HighWatermarks returns every hosted partition's high watermark, for the
// replication-offset-checkpoint file the log dir owner writes.
func (rm *ReplicaManager) HighWatermarks() map[kafka.TopicPartition]int64 {
	out := make(map[kafka.TopicPartition]int64)
	for _, p := range rm.Partitions() {
		out[p.tp] = p.HighWatermark()
	}
	return out
}
