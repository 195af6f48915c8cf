package txn

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sluice-io/sluice/internal/kafka"
)

// AddPartitions adds partitions to the transaction, starting it if none is
// open (Kafka's handleAddPartitionsToTransaction); reply gets the code for
// every partition once the new state is durable, or at once when nothing
// is new. A pending transition is checked first: under TV2 the producer may
// already use the producer id a completing transaction moves it to.
func (m *Manager) AddPartitions(now time.Time, req AddPartitionsRequest, reply func(code int16)) {
	m.now = now
	if req.TransactionalID == "" {
		reply(kerr.InvalidRequest.Code)
		return
	}
	t, ok := m.txns[req.TransactionalID]
	var code int16
	switch {
	case !ok:
		code = kerr.InvalidProducerIDMapping.Code
	case t.hasPending:
		code = kerr.ConcurrentTransactions.Code
	case t.producerID != req.ProducerID:
		code = kerr.InvalidProducerIDMapping.Code
	case t.producerEpoch != req.ProducerEpoch:
		code = kerr.ProducerFenced.Code
	case t.state == PrepareCommit, t.state == PrepareAbort:
		code = kerr.ConcurrentTransactions.Code
	case t.state == Ongoing && t.hasAll(req.Partitions):
		reply(0) // nothing new: no write
		return
	}
	if code != 0 {
		reply(code)
		return
	}
	tr, code := t.prepareAddPartitions(req.Partitions, now.UnixMilli(), req.ClientTransactionVersion)
	if code != 0 {
		reply(code)
		return
	}
	m.appendTransit(t, tr, reply)
}

// AddOffsets adds the group's __consumer_offsets partition to the
// transaction (AddOffsetsToTxn), as AddPartitions does.
func (m *Manager) AddOffsets(now time.Time, req AddOffsetsRequest, reply func(code int16)) {
	if m.cfg.OffsetsPartitionFor == nil {
		reply(kerr.UnknownServerError.Code)
		return
	}
	tp := kafka.TopicPartition{Topic: OffsetsTopic, Partition: m.cfg.OffsetsPartitionFor(req.GroupID)}
	m.AddPartitions(now, AddPartitionsRequest{
		TransactionalID: req.TransactionalID, ProducerID: req.ProducerID, ProducerEpoch: req.ProducerEpoch,
		Partitions: []kafka.TopicPartition{tp}, ClientTransactionVersion: TV0,
	}, reply)
}

// Verify answers a partition leader's verification (AddPartitionsToTxn
// v4+ with VerifyOnly, Kafka's handleVerifyPartitionsInTransaction): one
// code per partition, in request order, 0 for a partition in the ongoing
// transaction and TRANSACTION_ABORTABLE for one that is not (the leader
// maps it for older producers, VerifyErrorForProducer). A pending
// transition is not checked: the append that follows is.
func (m *Manager) Verify(req VerifyRequest) []int16 {
	codes := make([]int16, len(req.Partitions))
	fill := func(code int16) []int16 {
		for i := range codes {
			codes[i] = code
		}
		return codes
	}
	if req.TransactionalID == "" {
		return fill(kerr.InvalidRequest.Code)
	}
	t, ok := m.txns[req.TransactionalID]
	switch {
	case !ok, t.producerID != req.ProducerID:
		return fill(kerr.InvalidProducerIDMapping.Code)
	case t.producerEpoch != req.ProducerEpoch:
		return fill(kerr.ProducerFenced.Code)
	case t.state == PrepareCommit, t.state == PrepareAbort:
		return fill(kerr.ConcurrentTransactions.Code)
	}
	for i, tp := range req.Partitions {
		if _, in := t.partitions[tp]; !in {
			codes[i] = kerr.TransactionAbortable.Code
		}
	}
	return codes
}

func (t *txnMetadata) hasAll(parts []kafka.TopicPartition) bool {
	for _, tp := range parts {
		if _, ok := t.partitions[tp]; !ok {
			return false
		}
	}
	return true
}
