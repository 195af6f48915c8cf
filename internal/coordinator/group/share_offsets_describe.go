package group

// DescribeShareGroupOffsets' answers: each partition's start offset and,
// from version 1, its lag (KIP-1226), from the share coordinator's state
// summary and the partition's end offset.

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// UninitializedLag is the lag of a partition whose lag is not known
// (Kafka's PartitionFactory.UNINITIALIZED_LAG); the delivery complete
// count has the same "unknown" value.
const (
	UninitializedLag                   = -1
	UninitializedDeliveryCompleteCount = -1
)

// ShareStateSummary is a share partition's ReadShareGroupStateSummary
// answer. ErrorCode is the share coordinator's (or the persister's)
// error for the partition.
type ShareStateSummary struct {
	ErrorCode             int16
	StateEpoch            int32
	LeaderEpoch           int32
	StartOffset           int64
	DeliveryCompleteCount int32
}

// LagKnown reports whether a partition's lag can be computed: its summary
// succeeded, it has a start offset and a delivery complete count (Kafka's
// shouldComputeSharePartitionLag).
func (s ShareStateSummary) LagKnown() bool {
	return s.ErrorCode == 0 && s.StartOffset != UninitializedStartOffset && s.DeliveryCompleteCount != UninitializedDeliveryCompleteCount
}

// PartitionOffsets is one partition of a DescribeShareGroupOffsets answer.
type PartitionOffsets struct {
	Partition    int32
	StartOffset  int64
	LeaderEpoch  int32
	Lag          int64
	ErrorCode    int16
	ErrorMessage *string
}

// TopicOffsets is one topic of a DescribeShareGroupOffsets answer; a
// topic the image does not have has a zero TopicID.
type TopicOffsets struct {
	TopicName  string
	TopicID    kafka.UUID
	Partitions []PartitionOffsets
}

// ShareGroupOffsets is one group of a DescribeShareGroupOffsets answer.
type ShareGroupOffsets struct {
	GroupID      string
	ErrorCode    int16
	ErrorMessage *string
	Topics       []TopicOffsets
}

// SummaryOffsets is a partition's answer when its lag is not computed:
// the summary's start offset and leader epoch, or -1 and 0 when the
// summary failed; the failure itself is not reported (Kafka treats it as
// absent data, as OffsetFetch does).
func SummaryOffsets(partition int32, s ShareStateSummary) PartitionOffsets {
	p := PartitionOffsets{Partition: partition, StartOffset: UninitializedStartOffset, Lag: UninitializedLag}
	if s.ErrorCode == 0 {
		p.StartOffset, p.LeaderEpoch = s.StartOffset, s.LeaderEpoch
	}
	return p
}

// LagOffsets is a partition's answer with its lag: the end offset (the
// offset the next record gets) less the start offset less the records
// past it already acknowledged or archived (Kafka's
// computeShareGroupLagAndBuildResponse). It is not clamped: Kafka 4.4.0
// answers -3 for an empty partition altered to start offset 3 (observed
// with bench/kafka-ref). endErr, a failure to learn the end offset, is
// the partition's error instead.
func LagOffsets(partition int32, s ShareStateSummary, end int64, endErr error) PartitionOffsets {
	if endErr != nil {
		msg := endErr.Error()
		return PartitionOffsets{Partition: partition, Lag: UninitializedLag, ErrorCode: ErrorCodeOf(endErr), ErrorMessage: &msg}
	}
	return PartitionOffsets{Partition: partition, StartOffset: s.StartOffset, LeaderEpoch: s.LeaderEpoch,
		Lag: end - s.StartOffset - int64(s.DeliveryCompleteCount)}
}

// MissingTopicOffsets answers a topic the image does not have: every
// partition at start offset -1, no error.
func MissingTopicOffsets(t ShareOffsetsTopic) TopicOffsets {
	out := TopicOffsets{TopicName: t.TopicName, Partitions: make([]PartitionOffsets, 0, len(t.Partitions))}
	for _, p := range t.Partitions {
		out.Partitions = append(out.Partitions, PartitionOffsets{Partition: p, StartOffset: UninitializedStartOffset, Lag: UninitializedLag})
	}
	return out
}

// ErrorCodeOf is the Kafka error code an error carries, or
// UNKNOWN_SERVER_ERROR (Kafka's Errors.forException).
func ErrorCodeOf(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}
