// Package groupcoord is the group coordinator (Kafka's
// GroupCoordinatorService): a coordinator/runtime over __consumer_offsets
// whose shards each own a group.Manager. It maps a group to its partition
// (Java's String.hashCode, as Kafka), serves the group APIs on that
// partition's shard and fans ListGroups out to every shard. Replies that
// depend on a write (commits, the leader's assignment, group deletion) go
// out once the partition's high watermark has passed the write.
//
// Differences from Kafka's coordinator, which keeps its state in timeline
// data structures and rolls back what a failed write changed:
//   - Offsets become visible only once durable (as in Kafka), but group
//     membership changes are applied at once; when the write of an
//     assignment fails, the waiting members get the error and the group
//     rebalances, and a static member's new id is kept (Kafka reverts it).
//   - Transactional offset commits (TxnOffsetCommit) are written as a
//     transactional batch of the producer and held pending until the
//     broker's marker writer reports the transaction's result
//     (CompleteTransaction) after appending the marker itself; in Kafka's
//     coordinator the runtime writes the marker to the partition. The
//     transaction is not verified with the transaction coordinator before
//     the write (Kafka's KIP-890 verification of the offsets partition).
//   - Classic, KIP-848 consumer and KIP-932 share groups are served
//     (share.go: share state through a SharePersister); streams groups
//     are not, and their records in the log are skipped at load. A share
//     group's new target is computed within a heartbeat once
//     group.share.assignment.interval.ms has passed (Kafka may offload
//     it); topics deleted from a share group's state are dropped at its
//     next heartbeat, not when the deletion is seen.
//   - A consumer group's target assignment is computed within the
//     heartbeat that needs it, and regular expressions are resolved there
//     too (Kafka offloads both and refreshes regexes on a timer).
package groupcoord
