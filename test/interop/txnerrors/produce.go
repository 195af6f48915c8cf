package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// produce sends one transactional batch (sequence seq) of p to partition of the topic at
// version v, to its leader, and prints the answer. From v13 the topic goes by its id.
func (r *runner) produce(p *producer, v int16, partition, seq int32) int16 {
	if r.err != nil {
		return -1
	}
	leader, ok := r.leaders[partition]
	if !ok {
		r.fail(fmt.Errorf("no leader for %s-%d", topic, partition))
		return -1
	}
	req := kmsg.NewPtrProduceRequest()
	req.TransactionID = &p.id
	req.Acks = -1
	req.TimeoutMillis = 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, r.topicID
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = transactionalBatch(p.pid, p.epoch, seq)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	kresp, err := r.request(leader, v, req)
	if r.fail(err) {
		return -1
	}
	resp := kresp.(*kmsg.ProduceResponse)
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		r.fail(fmt.Errorf("produce v%d: %d topics answered", v, len(resp.Topics)))
		return -1
	}
	code := resp.Topics[0].Partitions[0].ErrorCode
	r.line(req.Key(), v, fmt.Sprintf("%s-%d epoch %d seq %d", topic, partition, p.epoch, seq), code)
	return code
}

// transactionalBatch is a record batch v2 of one record with the transactional attribute.
func transactionalBatch(pid int64, epoch int16, seq int32) []byte {
	now := time.Now().UnixMilli()
	rec := kmsg.NewRecord()
	rec.Key = []byte("k")
	rec.Value = []byte(fmt.Sprintf("txnerr-%d", seq))
	// The length prefix counts what follows it; a small record has a one-byte prefix.
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	b := kmsg.NewRecordBatch()
	b.Magic = 2
	b.PartitionLeaderEpoch = -1
	b.Attributes = 0x10 // transactional
	b.FirstTimestamp = now
	b.MaxTimestamp = now
	b.ProducerID = pid
	b.ProducerEpoch = epoch
	b.FirstSequence = seq
	b.NumRecords = 1
	b.Records = rec.AppendTo(nil)
	raw := b.AppendTo(nil)
	// batchLength counts the bytes after its own field; the CRC covers attributes onwards.
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}
