package txn

import (
	"bytes"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

func partSet(tps ...kafka.TopicPartition) map[kafka.TopicPartition]struct{} {
	m := map[kafka.TopicPartition]struct{}{}
	for _, tp := range tps {
		m[tp] = struct{}{}
	}
	return m
}

// codecCases pair a transition with the value Kafka writes for it at a
// server transaction version.
var codecCases = []struct {
	name   string
	server TransactionVersion
	tr     transit
	kafka  kafkaValue
}{
	{
		name: "empty v0", server: TV0,
		tr: transit{producerID: 5, prevProducerID: 5, nextProducerID: -1, producerEpoch: 2, timeoutMs: 60000,
			state: Empty, partitions: partSet(), startTimestamp: -1, lastUpdateTimestamp: 1700000000000},
		kafka: kafkaValue{version: 0, producerID: 5, producerEpoch: 2, timeoutMs: 60000, status: 0,
			lastUpdateMs: 1700000000000, startMs: -1},
	},
	{
		name: "ongoing v0", server: TV0,
		tr: transit{producerID: 5, prevProducerID: 5, nextProducerID: -1, producerEpoch: 2, timeoutMs: 60000,
			state: Ongoing, partitions: partSet(kafka.TopicPartition{Topic: "b", Partition: 1}, kafka.TopicPartition{Topic: "a", Partition: 2},
				kafka.TopicPartition{Topic: "a", Partition: 0}), startTimestamp: 1700000000001, lastUpdateTimestamp: 1700000000002},
		kafka: kafkaValue{version: 0, producerID: 5, producerEpoch: 2, timeoutMs: 60000, status: 1,
			partitions: map[string][]int32{"a": {0, 2}, "b": {1}}, lastUpdateMs: 1700000000002, startMs: 1700000000001},
	},
	{
		name: "empty v1", server: TV1,
		tr: transit{producerID: 5, prevProducerID: 5, nextProducerID: -1, producerEpoch: 2, timeoutMs: 60000,
			state: Empty, partitions: partSet(), startTimestamp: -1, lastUpdateTimestamp: 1700000000000},
		kafka: kafkaValue{version: 1, producerID: 5, producerEpoch: 2, timeoutMs: 60000, status: 0,
			lastUpdateMs: 1700000000000, startMs: -1, prevProducerID: 5, nextProducerID: -1, nextProducerEpoch: -1},
	},
	{
		name: "prepare commit overflowing v1", server: TV2,
		tr: transit{producerID: 5, prevProducerID: 5, nextProducerID: 77, producerEpoch: 32767, timeoutMs: 900000,
			state: PrepareCommit, partitions: partSet(kafka.TopicPartition{Topic: "topic", Partition: 9}),
			startTimestamp: 1700000000001, lastUpdateTimestamp: 1700000000002, clientVersion: TV2},
		kafka: kafkaValue{version: 1, producerID: 5, producerEpoch: 32767, timeoutMs: 900000, status: 2,
			partitions: map[string][]int32{"topic": {9}}, lastUpdateMs: 1700000000002, startMs: 1700000000001,
			prevProducerID: 5, nextProducerID: 77, clientTransactionVersion: 2, nextProducerEpoch: -1},
	},
	{
		name: "complete abort v1", server: TV2,
		tr: transit{producerID: 77, prevProducerID: 5, nextProducerID: -1, producerEpoch: 0, timeoutMs: 900000,
			state: CompleteAbort, partitions: partSet(), startTimestamp: 1700000000001, lastUpdateTimestamp: 1700000000003, clientVersion: TV2},
		kafka: kafkaValue{version: 1, producerID: 77, producerEpoch: 0, timeoutMs: 900000, status: 5,
			partitions: map[string][]int32{}, lastUpdateMs: 1700000000003, startMs: 1700000000001,
			prevProducerID: 5, nextProducerID: -1, clientTransactionVersion: 2, nextProducerEpoch: -1},
	},
}

// TestEncodeAsKafka checks our keys and values byte for byte against
// Kafka's layout.
func TestEncodeAsKafka(t *testing.T) {
	if got, want := txnKey("my-txn"), kafkaKey("my-txn"); !bytes.Equal(got, want) {
		t.Errorf("key = %x, want %x", got, want)
	}
	for _, c := range codecCases {
		t.Run(c.name, func(t *testing.T) {
			got, want := encodeValue(c.tr, c.server), c.kafka.bytes()
			if !bytes.Equal(got, want) {
				t.Errorf("value\n got %x\nwant %x", got, want)
			}
		})
	}
}

// TestReplayKafkaValues loads values laid out as Kafka writes them, from a
// 3.x broker (version 0) to 4.1+ (NextProducerEpoch) and a future one (an
// unknown tag).
func TestReplayKafkaValues(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	for _, c := range codecCases {
		for _, extra := range []bool{false, true} {
			v := c.kafka
			if extra {
				if v.version == 0 {
					continue
				}
				v.nextProducerEpoch, v.unknownTag = 3, true
			}
			m := NewManager(DefaultConfig(), 1, now)
			if err := m.Replay(now, kafkaKey("id"), v.bytes()); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got := m.txns["id"]
			want := c.tr
			if c.kafka.version == 0 {
				// Version 0 has neither the producer ids nor the client's
				// transaction version.
				want.prevProducerID, want.nextProducerID, want.clientVersion = -1, -1, TV0
			}
			if got == nil || !sameAsTransit(got, want) {
				t.Errorf("%s (extra tags %v): loaded %+v, want %+v", c.name, extra, got, want)
			}
		}
	}
}

func sameAsTransit(t *txnMetadata, tr transit) bool {
	return t.producerID == tr.producerID && t.prevProducerID == tr.prevProducerID &&
		t.nextProducerID == tr.nextProducerID && t.producerEpoch == tr.producerEpoch &&
		t.lastProducerEpoch == -1 && t.timeoutMs == tr.timeoutMs && t.state == tr.state &&
		reflect.DeepEqual(t.partitions, tr.partitions) && t.startTimestamp == tr.startTimestamp &&
		t.lastUpdateTimestamp == tr.lastUpdateTimestamp && t.clientVersion == tr.clientVersion && !t.hasPending
}

func TestReplayRefuses(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	good := newKafkaValue(1)
	good.producerID, good.status = 3, int8(Empty)
	cases := map[string]struct {
		key, value []byte
		wantErr    bool
	}{
		"short key":           {key: []byte{0}, value: good.bytes(), wantErr: true},
		"other key version":   {key: []byte{0, 1, 0, 2, 'i', 'd'}, value: []byte{1}},
		"truncated key":       {key: []byte{0, 0, 0, 9, 'i'}, value: good.bytes(), wantErr: true},
		"short value":         {key: kafkaKey("id"), value: []byte{0}, wantErr: true},
		"value version 2":     {key: kafkaKey("id"), value: append([]byte{0, 2}, good.bytes()[2:]...), wantErr: true},
		"truncated value":     {key: kafkaKey("id"), value: good.bytes()[:20], wantErr: true},
		"unknown state":       {key: kafkaKey("id"), value: kafkaValue{version: 0, status: 9, startMs: -1}.bytes(), wantErr: true},
		"prepare epoch fence": {key: kafkaKey("id"), value: kafkaValue{version: 0, status: 7, startMs: -1}.bytes(), wantErr: true},
	}
	for name, c := range cases {
		m := NewManager(DefaultConfig(), 1, now)
		err := m.Replay(now, c.key, c.value)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: err = %v, want error %v", name, err, c.wantErr)
		}
		if len(m.txns) != 0 {
			t.Errorf("%s: loaded %v", name, m.TransactionalIDs())
		}
	}
}

// TestRoundTrip writes a sequence of transitions and loads them back.
func TestRoundTrip(t *testing.T) {
	now := time.UnixMilli(1700000000000)
	for _, c := range codecCases {
		if c.server == TV0 {
			continue
		}
		m := NewManager(DefaultConfig(), 1, now)
		if err := m.Replay(now, txnKey("x"), encodeValue(c.tr, c.server)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := m.txns["x"]; !sameAsTransit(got, c.tr) {
			t.Errorf("%s: loaded %+v, want %+v", c.name, got, c.tr)
		}
		// A tombstone forgets it.
		if err := m.Replay(now, txnKey("x"), nil); err != nil || len(m.txns) != 0 {
			t.Errorf("%s: tombstone: %v, %v", c.name, err, m.TransactionalIDs())
		}
	}
}
