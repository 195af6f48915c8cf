package consumerrec

import (
	"github.com/twmb/franz-go/pkg/kbin"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ConsumerGroupPartitionMetadataValue is the metadata of the topics the
// group subscribes to (record type 4). Kafka 4.0+ writes it no more and
// reads it only to migrate to MetadataHash; it deletes it with a tombstone.
type ConsumerGroupPartitionMetadataValue struct {
	Topics []TopicMetadata // the subscribed topics' metadata
}

// TopicMetadata is one topic of a ConsumerGroupPartitionMetadataValue.
type TopicMetadata struct {
	TopicID       kafka.UUID // the topic id
	TopicName     string     // the topic name
	NumPartitions int32      // the topic's partition count
	// PartitionMetadata maps partitions to racks; deprecated since 4.0,
	// empty when no rack is known.
	PartitionMetadata []PartitionMetadata
}

// PartitionMetadata is the racks of one partition of a TopicMetadata.
type PartitionMetadata struct {
	Partition int32    // the partition number
	Racks     []string // the racks of its replicas
}

// Smallest encodings, which bound the element counts a decoder accepts:
// uuid, name, count, array, tags; partition, array, tags.
const (
	minTopicMetadata     = 16 + 1 + 4 + 1 + 1
	minPartitionMetadata = 4 + 1 + 1
)

// RecordType returns TypeConsumerGroupPartitionMetadata.
func (*ConsumerGroupPartitionMetadataValue) RecordType() int16 {
	return TypeConsumerGroupPartitionMetadata
}

// AppendTo appends the value, version first.
func (v *ConsumerGroupPartitionMetadataValue) AppendTo(dst []byte) []byte {
	dst = appendValueHeader(dst)
	dst = appendArray(dst, v.Topics, appendTopicMetadata)
	return noTags(dst)
}

func appendTopicMetadata(dst []byte, t *TopicMetadata) []byte {
	dst = kbin.AppendUuid(dst, t.TopicID)
	dst = kbin.AppendCompactString(dst, t.TopicName)
	dst = kbin.AppendInt32(dst, t.NumPartitions)
	dst = appendArray(dst, t.PartitionMetadata, appendPartitionMetadata)
	return noTags(dst)
}

func appendPartitionMetadata(dst []byte, p *PartitionMetadata) []byte {
	dst = kbin.AppendInt32(dst, p.Partition)
	dst = appendCompactStrings(dst, p.Racks)
	return noTags(dst)
}

// ReadFrom decodes a value written by AppendTo (or Kafka).
func (v *ConsumerGroupPartitionMetadataValue) ReadFrom(b []byte) error {
	var x ConsumerGroupPartitionMetadataValue
	err := readValue(b, "ConsumerGroupPartitionMetadataValue", func(d *decoder) {
		x.Topics = array(d, "Topics", minTopicMetadata, readTopicMetadata)
		d.skipTags()
	})
	if err == nil {
		*v = x
	}
	return err
}

func readTopicMetadata(d *decoder, t *TopicMetadata) {
	t.TopicID = d.uuid()
	t.TopicName = d.compactString("TopicName")
	t.NumPartitions = d.int32()
	t.PartitionMetadata = array(d, "PartitionMetadata", minPartitionMetadata, readPartitionMetadata)
	d.skipTags()
}

func readPartitionMetadata(d *decoder, p *PartitionMetadata) {
	p.Partition = d.int32()
	p.Racks = d.compactStrings("Racks")
	d.skipTags()
}
