// Package share is the share coordinator's state machine (Kafka 4.4's
// ShareCoordinatorShard, ShareGroupOffset and PersisterStateBatchCombiner),
// pure as coordinator/txn is: no goroutines, no clock, no I/O. Time comes in
// as arguments; what to persist comes out as Writes of __share_group_state
// records (Kafka's ShareSnapshot and ShareUpdate formats) whose Done the
// caller runs on the same goroutine once they are durable or have failed.
//
// One Manager holds the share-partition states of one __share_group_state
// partition, each keyed by group, topic id and partition (Kafka's
// SharePartitionKey). A state is a snapshot (state epoch, leader epoch,
// start offset, delivery-complete count, timestamps, state batches) with
// the updates written since applied over it. A write appends a ShareUpdate
// holding only its own batches, or a full ShareSnapshot once
// share.coordinator.snapshot.update.records.per.snapshot updates have been
// written since the last one. Replaying the partition's records rebuilds
// the same state: every operation changes the state only by applying the
// record it writes, through the same code the load runs.
//
// As in Kafka, the record is applied when it is emitted, so that the next
// operation on the same share partition sees it; a write that fails
// restores the partition's last durable state once its writes in flight
// are done, and until then operations on it answer
// COORDINATOR_NOT_AVAILABLE (retriable).
//
// The coordinator service (coordinator/sharecoord) runs a Manager as the
// Shard of the coordinator runtime.
package share
