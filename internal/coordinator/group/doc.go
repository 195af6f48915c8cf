// Package group is the consumer-group protocols as a pure state machine:
// classic groups (members, generations, rebalances), KIP-848 consumer
// groups (the consumer_*.go files: member and group epochs, server-side
// assignment, reconciliation, the online migration between the two) and
// the committed offsets both share, driven by requests and by a clock the
// caller passes in. It does no I/O and
// starts no goroutines: everything it wants persisted comes out as Writes of
// __consumer_offsets records (Kafka's key/value formats), and replies that
// must wait for durability are handed back as callbacks the caller runs once
// the write is acknowledged. The group coordinator (package
// coordinator/groupcoord) runs one Manager per __consumer_offsets partition
// on an event loop of the coordinator runtime (coordinator/runtime).
//
// The behaviour follows Kafka's classic group coordinator (the
// group-coordinator module's ClassicGroup and GroupMetadataManager): KIP-394
// member ids, KIP-345 static membership and batched leave, the initial
// rebalance delay, session, rebalance and pending-sync timeouts.
// Transactional offset commits follow its OffsetMetadataManager: pending
// offsets of (producer, group) until the transaction's marker, Kafka's
// order rule between them and plain commits, UNSTABLE_OFFSET_COMMIT for
// require_stable fetches. Consumer groups follow its GroupMetadataManager,
// ConsumerGroup and CurrentAssignmentBuilder (Kafka 4.4); their
// differences are in docs/compatibility.md. Share groups (KIP-932, the
// share_*.go files) follow its share parts and ShareGroup: member epochs,
// the simple assignor, whole assignments, and the share state of their
// partitions (ShareGroupStatePartitionMetadata) initialized before
// assignment.
package group
