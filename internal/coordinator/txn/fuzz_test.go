package txn

import (
	"testing"
	"time"

	"github.com/sluice-io/sluice/internal/kafka"
)

// FuzzReplay feeds arbitrary records to a Manager's replay: it must refuse
// or accept them without panicking; what it accepts must write back the
// same (a value re-encoded loads to the same state) and serve requests.
func FuzzReplay(f *testing.F) {
	for _, c := range codecCases {
		f.Add(kafkaKey("t"), c.kafka.bytes())
		f.Add(txnKey("t"), encodeValue(c.tr, TV2))
	}
	v := newKafkaValue(1)
	v.status, v.partitions, v.nextProducerEpoch, v.unknownTag = int8(PrepareAbort), map[string][]int32{"a": {1}}, 2, true
	f.Add(kafkaKey("t"), v.bytes())
	f.Add(kafkaKey("t"), []byte(nil))
	f.Add([]byte{0, 1, 0, 1, 't'}, []byte{0, 0})
	f.Add(kafkaKey(""), []byte{0, 1, 0})
	now := time.UnixMilli(1700000000000)
	fresh := int64(9)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		m := NewManager(DefaultConfig(), 1, now)
		if err := m.Replay(now, key, value); err != nil {
			return
		}
		for _, id := range m.TransactionalIDs() {
			checkReencodes(t, m.txns[id])
		}
		m.FinishLoad(now)
		for _, id := range m.TransactionalIDs() {
			t0 := m.txns[id]
			m.Describe(id)
			m.Verify(VerifyRequest{TransactionalID: id, ProducerID: t0.producerID, ProducerEpoch: t0.producerEpoch,
				Partitions: []kafka.TopicPartition{{Topic: "a", Partition: 1}}})
			m.EndTxn(now, EndTxnRequest{TransactionalID: id, ProducerID: t0.producerID, ProducerEpoch: t0.producerEpoch,
				ClientTransactionVersion: TV2, FreshProducerID: &fresh}, func(EndTxnResult) {})
			m.InitProducerID(now, InitRequest{TransactionalID: id, TimeoutMs: 1000, ProducerID: -1, ProducerEpoch: -1,
				FreshProducerID: &fresh}, func(InitResult) {})
		}
		m.List(now, ListFilter{DurationMs: -1})
		for _, j := range m.TakeMarkers() {
			m.MarkersWritten(now, j)
		}
		for _, w := range m.TakeWrites() {
			w.Done(nil)
		}
		m.Tick(now.Add(365 * 24 * time.Hour))
	})
}

// checkReencodes writes t's state as a value and loads it back.
func checkReencodes(t *testing.T, t0 *txnMetadata) {
	t.Helper()
	tr := t0.begin(t0.state)
	tr.prevProducerID = t0.prevProducerID
	m := NewManager(DefaultConfig(), 1, time.Time{})
	if err := m.Replay(time.Time{}, txnKey(t0.id), encodeValue(tr, TV2)); err != nil {
		t.Fatalf("re-encoded value does not load: %v", err)
	}
	if got := m.txns[t0.id]; got == nil || !sameAsTransit(got, tr) {
		t.Fatalf("re-encoded value loads %+v, want %+v", got, tr)
	}
}
