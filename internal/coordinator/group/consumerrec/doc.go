// Package consumerrec encodes and decodes the records the KIP-848 consumer
// group protocol keeps in __consumer_offsets, byte for byte as Kafka 4.4's
// group coordinator writes them, so that Kafka's DumpLogSegments reads ours
// and we read Kafka's.
//
// A key is an int16 record type followed by the key's fields in the
// non-flexible encoding (int16-prefixed strings). A value is an int16
// version (0) followed by the fields in the flexible encoding (compact
// strings and arrays, tagged-field sections). A tombstone is a key with a
// nil value.
//
// The Go types mirror Kafka's generated classes. Where Kafka tells null
// apart from its default, so does the Go type: a nil
// ConsumerGroupMemberMetadataValue.ClassicMemberMetadata or a nil
// TopicPartitions.AssignmentEpochs is Kafka's null and is written as an
// explicit null tag (what Kafka writes for a member of the consumer
// protocol); a default value (zero ClassicMemberMetadata, empty epochs) is
// not written; an absent tag reads back as the default, not as nil.
// Non-nullable arrays decode to non-nil slices, empty when empty.
//
// Decoding takes hostile input: it never panics, rejects trailing bytes,
// and bounds every allocation by the input's length. Unknown tagged fields
// are skipped.
package consumerrec
