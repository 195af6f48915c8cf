package txn

import (
	"encoding/binary"
	"sort"
)

// kafkaValue is a __transaction_state value laid out as Kafka's generated
// TransactionLogValue serializer writes it (MessageUtil.toVersionPrefixedBytes),
// written here field by field from the schema, independently of kmsg, so
// that the tests compare our bytes and our reading against Kafka's layout.
type kafkaValue struct {
	version                        int16
	producerID                     int64
	producerEpoch                  int16
	timeoutMs                      int32
	status                         int8
	partitions                     map[string][]int32 // nil: null (Empty)
	lastUpdateMs, startMs          int64
	prevProducerID, nextProducerID int64 // tags 0 and 1, default -1
	clientTransactionVersion       int16 // tag 2, default 0
	nextProducerEpoch              int16 // tag 3 (Kafka 4.1+), default -1
	unknownTag                     bool  // adds tag 9 (a future field)
}

func kafkaKey(id string) []byte {
	b := binary.BigEndian.AppendUint16(nil, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(len(id)))
	return append(b, id...)
}

func (v kafkaValue) bytes() []byte {
	flexible := v.version >= 1
	b := binary.BigEndian.AppendUint16(nil, uint16(v.version))
	b = binary.BigEndian.AppendUint64(b, uint64(v.producerID))
	b = binary.BigEndian.AppendUint16(b, uint16(v.producerEpoch))
	b = binary.BigEndian.AppendUint32(b, uint32(v.timeoutMs))
	b = append(b, byte(v.status))
	b = v.appendPartitions(b, flexible)
	b = binary.BigEndian.AppendUint64(b, uint64(v.lastUpdateMs))
	b = binary.BigEndian.AppendUint64(b, uint64(v.startMs))
	if flexible {
		b = v.appendTags(b)
	}
	return b
}

func (v kafkaValue) appendPartitions(b []byte, flexible bool) []byte {
	topics := make([]string, 0, len(v.partitions))
	for t := range v.partitions {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	switch {
	case v.partitions == nil && flexible:
		return binary.AppendUvarint(b, 0)
	case v.partitions == nil:
		return binary.BigEndian.AppendUint32(b, 0xffffffff)
	case flexible:
		b = binary.AppendUvarint(b, uint64(len(topics)+1))
	default:
		b = binary.BigEndian.AppendUint32(b, uint32(len(topics)))
	}
	for _, t := range topics {
		ps := v.partitions[t]
		if flexible {
			b = binary.AppendUvarint(b, uint64(len(t)+1))
			b = append(b, t...)
			b = binary.AppendUvarint(b, uint64(len(ps)+1))
		} else {
			b = binary.BigEndian.AppendUint16(b, uint16(len(t)))
			b = append(b, t...)
			b = binary.BigEndian.AppendUint32(b, uint32(len(ps)))
		}
		for _, p := range ps {
			b = binary.BigEndian.AppendUint32(b, uint32(p))
		}
		if flexible {
			b = binary.AppendUvarint(b, 0) // the topic's tagged fields
		}
	}
	return b
}

// appendTags writes the non-default tagged fields in tag order.
func (v kafkaValue) appendTags(b []byte) []byte {
	type tag struct {
		id  uint64
		val []byte
	}
	var tags []tag
	if v.prevProducerID != -1 {
		tags = append(tags, tag{0, binary.BigEndian.AppendUint64(nil, uint64(v.prevProducerID))})
	}
	if v.nextProducerID != -1 {
		tags = append(tags, tag{1, binary.BigEndian.AppendUint64(nil, uint64(v.nextProducerID))})
	}
	if v.clientTransactionVersion != 0 {
		tags = append(tags, tag{2, binary.BigEndian.AppendUint16(nil, uint16(v.clientTransactionVersion))})
	}
	if v.nextProducerEpoch != -1 {
		tags = append(tags, tag{3, binary.BigEndian.AppendUint16(nil, uint16(v.nextProducerEpoch))})
	}
	if v.unknownTag {
		tags = append(tags, tag{9, []byte{1, 2, 3}})
	}
	b = binary.AppendUvarint(b, uint64(len(tags)))
	for _, t := range tags {
		b = binary.AppendUvarint(b, t.id)
		b = binary.AppendUvarint(b, uint64(len(t.val)))
		b = append(b, t.val...)
	}
	return b
}

// newKafkaValue has the defaults of the generated class.
func newKafkaValue(version int16) kafkaValue {
	return kafkaValue{version: version, prevProducerID: -1, nextProducerID: -1, nextProducerEpoch: -1}
}
