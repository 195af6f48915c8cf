// Package coordinator runs the group coordinator: one shard per
// __consumer_offsets partition this broker leads, each an event loop that
// owns a group.Manager. A shard loads by replaying its partition, answers
// COORDINATOR_LOAD_IN_PROGRESS meanwhile, and then serves the group APIs.
// What the state machine asks to persist is appended to the partition
// through a PartitionWriter; replies that depend on a write (commits, the
// leader's assignment, group deletion) go out once the partition's high
// watermark has passed the write, the acks=all rule.
//
// Writes of one shard go out in order from one writer goroutine, which
// coalesces the writes waiting at that moment into one batch: under load
// many commits share one append and one wait for the high watermark.
//
// Differences from Kafka's coordinator, which keeps its state in timeline
// data structures and rolls back what a failed write changed:
//   - Offsets become visible only once durable (as in Kafka), but group
//     membership changes are applied at once; when the write of an
//     assignment fails, the waiting members get the error and the group
//     rebalances, and a static member's new id is kept (Kafka reverts it).
//   - Transactional offset commits are not served (no transactions yet).
//   - Only classic groups: KIP-848 consumer groups, share and streams groups
//     are not served; their records in the log are skipped at load.
package coordinator
