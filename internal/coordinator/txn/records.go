package txn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

// Record versions, as Kafka writes them so that its DumpLogSegments
// --transaction-log-decoder reads ours: keys version 0; values version 1
// (flexible, with the tagged previous/next producer ids and client
// transaction version) from transaction.version 1, else version 0.
const (
	keyVersion      int16 = 0
	maxValueVersion int16 = 1
)

func txnKey(id string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: id}
	return k.AppendTo(nil)
}

// encodeValue is Kafka's TransactionLog.valueToBytes: an Empty transaction
// has null partitions, the others a list grouped by topic (sorted here, so
// that the bytes are repeatable).
func encodeValue(tr transit, server TransactionVersion) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = server.logValueVersion()
	v.ProducerID, v.ProducerEpoch, v.TimeoutMillis = tr.producerID, tr.producerEpoch, tr.timeoutMs
	v.State = kmsg.TransactionState(tr.state)
	v.LastUpdateTimestamp, v.StartTimestamp = tr.lastUpdateTimestamp, tr.startTimestamp
	if tr.state != Empty {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
		for _, tp := range sortedPartitions(tr.partitions) {
			if n := len(v.Topics); n == 0 || v.Topics[n-1].Topic != tp.Topic {
				v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
			}
			last := &v.Topics[len(v.Topics)-1]
			last.Partitions = append(last.Partitions, tp.Partition)
		}
	}
	if v.Version >= 1 {
		v.PreviousProducerID, v.NextProducerID = tr.prevProducerID, tr.nextProducerID
		v.ClientTransactionVersion = int16(tr.clientVersion)
	}
	return v.AppendTo(nil)
}

func (m *Manager) record(id string, tr transit) Record {
	return Record{Key: txnKey(id), Value: encodeValue(tr, m.cfg.serverVersion())}
}

// errPendingState is a value holding a state Kafka only ever keeps pending.
var errPendingState = errors.New("transaction log value in a pending-only state")

// Replay applies one record read back from the partition (the load). A key
// of another version is skipped, as Kafka skips it; a tombstone (or a Dead
// value) forgets the id; a value that does not decode is an error (the
// runtime logs and skips it, and the id keeps its previous record).
func (m *Manager) Replay(_ time.Time, key, value []byte) error {
	if len(key) < 2 {
		return fmt.Errorf("transaction log key of %d bytes", len(key))
	}
	if int16(binary.BigEndian.Uint16(key)) != keyVersion {
		return nil
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return fmt.Errorf("decoding transaction log key: %w", err)
	}
	if value == nil {
		delete(m.txns, k.TransactionalID)
		return nil
	}
	t, err := decodeValue(k.TransactionalID, value)
	if err != nil {
		return fmt.Errorf("transaction log value of %q: %w", k.TransactionalID, err)
	}
	if t == nil {
		delete(m.txns, k.TransactionalID)
		return nil
	}
	m.txns[k.TransactionalID] = t
	return nil
}

// decodeValue is Kafka's TransactionLog.readTxnRecordValue; nil for a Dead
// value (an id being removed).
func decodeValue(id string, value []byte) (*txnMetadata, error) {
	if len(value) < 2 {
		return nil, fmt.Errorf("value of %d bytes", len(value))
	}
	if version := int16(binary.BigEndian.Uint16(value)); version < 0 || version > maxValueVersion {
		return nil, fmt.Errorf("unknown value version %d", version)
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(value); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	state := State(v.State)
	switch {
	case state == Dead:
		return nil, nil
	case state == PrepareEpochFence:
		return nil, errPendingState
	case state < 0 || state > PrepareEpochFence:
		return nil, fmt.Errorf("unknown transaction state %d", v.State)
	}
	t := newTxnMetadata(id, v.ProducerID, v.TimeoutMillis, v.LastUpdateTimestamp)
	t.prevProducerID, t.nextProducerID = v.PreviousProducerID, v.NextProducerID
	t.producerEpoch, t.state, t.startTimestamp = v.ProducerEpoch, state, v.StartTimestamp
	t.clientVersion = TransactionVersion(v.ClientTransactionVersion)
	if state != Empty {
		for _, topic := range v.Topics {
			for _, p := range topic.Partitions {
				t.partitions[kafka.TopicPartition{Topic: topic.Topic, Partition: p}] = struct{}{}
			}
		}
	}
	return t, nil
}

// FinishLoad ends the replay: the timers start from now, and transactions
// decided but not completed (PrepareCommit, PrepareAbort) get their marker
// jobs again, as Kafka's loader resends them.
func (m *Manager) FinishLoad(now time.Time) {
	m.lastAbortCheck, m.lastExpireCheck, m.now = now, now, now
	for _, id := range m.TransactionalIDs() {
		t := m.txns[id]
		if t.state == PrepareCommit || t.state == PrepareAbort {
			m.startCompletion(t)
		}
	}
}
