// Package runtime is the coordinator runtime (Kafka's CoordinatorRuntime in
// coordinator-common): it runs a state machine per partition of an internal
// topic (__consumer_offsets for the group coordinator) that this broker
// leads. Each such partition gets a shard: an event loop that owns the
// partition's Shard, and a writer goroutine that appends what the Shard
// emits through a PartitionWriter.
//
// A shard loads by replaying its partition from the log start to the
// leader's log end, answering COORDINATOR_LOAD_IN_PROGRESS meanwhile; an
// operation for a partition this node does not run answers NOT_COORDINATOR.
// Replies that depend on a write go out once the partition's high watermark
// has passed it, the acks=all rule. Writes of one shard go out in order from
// its writer, which coalesces the writes waiting at that moment into one
// batch: under load many of them share one append and one wait for the
// high watermark.
//
// A Write may be transactional (a producer's TxnOffsetCommit): it goes out
// as a transactional batch of that producer, alone, and a load hands the
// Shard each record with its batch's producer and each transaction marker
// that follows, so the Shard holds such records until their marker decides
// them.
//
// Unlike Kafka's runtime, where an operation returns its records and its
// response together (CoordinatorResult) and the runtime completes the
// response after the write, here an operation is a closure run on the loop
// with a reply function: the state machine may answer at once, later (a
// JoinGroup parked until the rebalance completes), or from the completion
// of a Write it emitted. Kafka rolls back the state a failed write changed
// (timeline data structures); a Shard here decides itself what a failed
// write undoes, in its Write's Done.
package runtime
