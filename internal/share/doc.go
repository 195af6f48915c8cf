// Package share is the broker side of share groups (KIP-932, "queues for
// Kafka"): the share partitions a partition leader keeps for each group
// (Kafka 4.4's SharePartition) and the share-session cache of ShareFetch
// and ShareAcknowledge (Kafka's ShareSessionCache). It is pure, as the
// coordinator state machines are: no goroutines, no clock, no I/O. Time
// comes in as arguments; what the share coordinator must record comes out
// as Writes the caller sends (WriteShareGroupState) and reports back with
// Partition.WriteDone.
//
// A Partition tracks the in-flight window of records between the
// share-partition start offset (SPSO) and end offset (SPEO): ranges of
// fetched offsets with one state each, AVAILABLE, ACQUIRED (by one member,
// until a lock deadline), ACKNOWLEDGED or ARCHIVED, until an
// acknowledgement or a partial acquisition splits a range into per-offset
// states. The caller reads the log from NextFetchOffset, hands what it read
// to Acquire, applies acknowledgements with Acknowledge, calls Expire when
// NextDeadline passes and ReleaseMember when a member's share session
// closes.
//
// As in Kafka, an acknowledgement or a release changes the records at once
// but marks them in transition: they cannot be acquired or acknowledged
// again, and the start offset does not move past them, until the write
// completes. A failed write rolls them back (to ACQUIRED, or AVAILABLE when
// the lock expired meanwhile), and the client is answered only once the
// write is done. Lock expiry is kept whatever its write's outcome, as
// Kafka keeps it. Acquisition itself is never written: a new leader
// delivers records acquired but not acknowledged again.
package share
