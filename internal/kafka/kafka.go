// Package kafka is the leaf vocabulary shared by every Sluice package: topic
// partitions, offsets, epochs and the sentinel values Kafka's protocol uses.
// It imports nothing of ours, so anything may depend on it.
package kafka

import "fmt"

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String renders the partition as Kafka names its directory: "<topic>-<partition>".
func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Sentinel offsets and timestamps of the Kafka protocol.
const (
	// NoOffset is "no offset known" in responses and checkpoints.
	NoOffset int64 = -1
	// ListOffsetsLatest and ListOffsetsEarliest are the special timestamps of ListOffsets.
	ListOffsetsLatest       int64 = -1
	ListOffsetsEarliest     int64 = -2
	ListOffsetsMaxTimestamp int64 = -3
	// NoTimestamp is a record or batch without a timestamp.
	NoTimestamp int64 = -1
	// NoEpoch is "no leader epoch known" (partition leader epoch in batches, epochs in requests).
	NoEpoch int32 = -1
	// NoProducerID marks a batch written without idempotence.
	NoProducerID int64 = -1
	// NoProducerEpoch and NoSequence complete a non-idempotent batch header.
	NoProducerEpoch int16 = -1
	NoSequence      int32 = -1
)
