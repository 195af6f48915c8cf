// Package txn is the transaction coordinator's state machine (Kafka's
// TransactionMetadata, TransactionLog and the state logic of
// TransactionCoordinator and TransactionStateManager), pure as
// coordinator/group is: no goroutines, no clock, no I/O. Time comes in as
// arguments; everything to persist comes out as Writes of __transaction_state
// records (Kafka's key/value formats) whose Done the caller runs on the same
// goroutine once they are durable or have failed; transaction markers to
// send come out as MarkerJobs (TakeMarkers); fresh producer ids come in with
// the requests that may need one (the caller allocates, the core never
// blocks).
//
// One Manager holds the transactional ids of one __transaction_state
// partition. The transaction coordinator service (coordinator/txncoord)
// runs it as the Shard of the coordinator runtime and owns the marker
// channel.
//
// A transactional id moves through Kafka's states: Empty (InitProducerId),
// Ongoing (AddPartitionsToTxn, AddOffsetsToTxn), PrepareCommit/PrepareAbort
// (EndTxn, written before any marker), CompleteCommit/CompleteAbort (written
// once every partition has its marker); PrepareEpochFence is the pending
// step of fencing an ongoing transaction (a new producer's InitProducerId,
// a timeout), Dead the pending step of expiring an id (a tombstone). At most
// one transition is in flight per id: a request that finds one answers
// CONCURRENT_TRANSACTIONS.
//
// The behaviour follows Kafka 4.x (the 2024-10 trunk plus the later
// Transactions V2 fixes: an abort may start from Empty or a completed
// transaction, EndTxn returns the producer id and epoch after the bump,
// epoch exhaustion moves to the next producer id with epoch 0, the log
// value keeps previous and next producer ids).
package txn
