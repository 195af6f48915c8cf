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
package coordinator
