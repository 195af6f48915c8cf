package txn

import "github.com/sluice-io/sluice/internal/kafka"

// Record is one __transaction_state record; a nil Value is a tombstone.
type Record struct {
	Key, Value []byte
}

// Write is records to append together, and what to run (on the goroutine
// that drives the Manager) once they are durable or have failed. The error
// is a *kerr.Error where one applies (NOT_COORDINATOR once the shard
// stopped, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT...).
type Write struct {
	Records []Record
	Done    func(err error)
}

// InitRequest is an InitProducerId with a transactional id.
type InitRequest struct {
	TransactionalID string
	// TimeoutMs is transaction.timeout.ms.
	TimeoutMs int32
	// ProducerID and ProducerEpoch are the client's current ones (KIP-360
	// recovery, v3+), both -1 when it has none.
	ProducerID    int64
	ProducerEpoch int16
	// FreshProducerID is a producer id the caller allocated, used if the
	// transactional id is new or its epochs are exhausted; nil for none.
	// Without one where one is needed the answer is NeedProducerID and
	// nothing changes: the caller allocates and runs the request again.
	// An id given but not used is wasted, as Kafka wastes some.
	FreshProducerID *int64
}

// InitResult is an InitProducerId answer. The caller maps PRODUCER_FENCED
// for old versions (ErrorForVersion).
type InitResult struct {
	ErrorCode     int16
	ProducerID    int64
	ProducerEpoch int16
	// NeedProducerID asks the caller to run the request again with a
	// FreshProducerID; the other fields are unset.
	NeedProducerID bool
}

// AddPartitionsRequest adds partitions to a transaction: AddPartitionsToTxn
// v0-3 from a client, or v4+ from a broker without VerifyOnly (the TV2
// implicit add of a produce). Topics are checked by the caller (existence,
// authorization).
type AddPartitionsRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []kafka.TopicPartition
	// ClientTransactionVersion is recorded with the transaction: TV2 for
	// the implicit add of a TV2 produce, TV0 for a client's request.
	ClientTransactionVersion TransactionVersion
}

// VerifyRequest is one transaction of an AddPartitionsToTxn v4+ with
// VerifyOnly: the partition leader asks whether the partitions are in the
// transaction before it appends a transactional batch.
type VerifyRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []kafka.TopicPartition
}

// AddOffsetsRequest is an AddOffsetsToTxn: it adds the group's
// __consumer_offsets partition to the transaction.
type AddOffsetsRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	GroupID         string
}

// EndTxnRequest is an EndTxn.
type EndTxnRequest struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Commit          bool
	// ClientTransactionVersion is EndTxnClientVersion(version): TV2 for
	// v5+, whose epoch is bumped by every EndTxn.
	ClientTransactionVersion TransactionVersion
	// FreshProducerID is as InitRequest's: under TV2 an exhausted epoch
	// moves the producer to a new id.
	FreshProducerID *int64
}

// EndTxnResult is an EndTxn answer. Under TV2 ProducerID and ProducerEpoch
// are what the producer uses next (v5 returns them); otherwise -1.
type EndTxnResult struct {
	ErrorCode      int16
	ProducerID     int64
	ProducerEpoch  int16
	NeedProducerID bool
}

// MarkerJob is the markers of one decided transaction to write to its
// partitions (WriteTxnMarkers). The caller reports MarkersWritten once
// every partition has acknowledged its marker (a partition of a deleted
// topic counts as acknowledged, as in Kafka).
type MarkerJob struct {
	TransactionalID  string
	ProducerID       int64
	ProducerEpoch    int16
	Commit           bool
	CoordinatorEpoch int32
	Partitions       []kafka.TopicPartition
}

// Description is one transaction of a DescribeTransactions answer.
type Description struct {
	ErrorCode     int16
	State         State
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	// StartTimestamp is when the transaction started, in ms; -1 if none.
	StartTimestamp int64
	Partitions     []kafka.TopicPartition
}

// ListFilter is ListTransactions' filters. Empty lists and a negative
// DurationMs do not filter.
type ListFilter struct {
	// States keeps transactions in a state of one of these names (none:
	// any). Unknown names are returned by List, and match nothing.
	States []string
	// ProducerIDs keeps transactions of one of these (none: any).
	ProducerIDs []int64
	// DurationMs keeps transactions started more than DurationMs ago; -1
	// does not filter (ListTransactions v1's DurationFilter, whose default
	// is -1: pass it through).
	DurationMs int64
	// MatchID, when set, keeps the ids it accepts (v2's pattern).
	MatchID func(transactionalID string) bool
}

// Listing is one transaction of a ListTransactions answer.
type Listing struct {
	TransactionalID string
	ProducerID      int64
	State           State
}
