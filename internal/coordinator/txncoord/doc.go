// Package txncoord is the transaction coordinator (Kafka's
// TransactionCoordinator, TransactionStateManager and
// TransactionMarkerChannelManager): a coordinator/runtime over
// __transaction_state whose shards each own a txn.Manager, and the marker
// channel that writes the markers of decided transactions to their
// partitions' leaders.
//
// A transactional id maps to its partition as Kafka maps it (Java's
// String.hashCode); the topic is created on the first FindCoordinator for
// a transaction key. An operation that may need a fresh producer id
// (InitProducerId, a TV2 EndTxn whose epochs are exhausted) runs on the
// shard first; when the state machine answers NeedProducerID the
// coordinator takes one from the broker's producer id blocks, off the
// shard's loop, and runs it again.
//
// Once a PrepareCommit or PrepareAbort is durable the shard emits a marker
// job; the MarkerChannel sends WriteTxnMarkers to each partition leader
// (through the local MarkerWriter when it is this broker), retries
// retriable errors and leader changes, and once every partition has its
// marker runs MarkersWritten on the shard, which writes CompleteCommit or
// CompleteAbort. A shard loaded with a decided transaction emits its job
// again (failover).
//
// Differences from Kafka: an unexpected error from a partition's marker
// write (Kafka throws IllegalStateException from its send thread) is
// logged and retried; the replication factor of __transaction_state is
// capped at the unfenced brokers when it is created (and its min ISR at
// that factor), so that a small cluster can serve transactions.
package txncoord
