// Package producerstate keeps, per partition, what the broker knows of each
// idempotent or transactional producer: its epoch, the metadata of its last
// five batches, its open transaction and its last transaction coordinator
// epoch. It is Kafka's ProducerStateManager, and its snapshots are Kafka's
// `.snapshot` files byte for byte.
//
// Ownership: a Manager is owned by one partition's Log and called only under
// that Log's lock; it does no locking of its own.
//
// Leader append path (one produce request, offsets already assigned):
//
//	a := m.BeginAppend(producerstate.OriginClient)
//	for each batch h: v, err := a.AddBatch(h)
//	    err != nil      -> fail the partition with the wrapped kerr code
//	    v.Duplicate     -> write nothing; answer with v.FirstOffset (Kafka's behaviour)
//	write the batches to the segment, then
//	completed := a.Commit()   // completed transactions carry their last stable offset
//
// Check and Update are the one-batch shortcuts of that. Markers written for
// the transaction coordinator go through BeginAppend(OriginCoordinator) and
// AddMarker. Followers and recovery use Replay and ReplayMarker, which do no
// sequence checks.
//
// Transaction verification (KIP-890), on the leader with it enabled: before
// the first transactional batch of a producer, the caller takes
// g := m.MaybeStartVerification(pid, seq, epoch) (0 when the transaction is
// already ongoing), asks the transaction coordinator, and appends with
// a.RequireVerification(g): a transactional batch with no ongoing
// transaction and a guard that is not the producer's current one is
// refused with INVALID_TXN_STATE. Any transactional batch or marker
// committed for the producer spends its guard (Kafka's VerificationGuard and
// VerificationStateEntry).
//
// Recovery after an unclean stop: TruncateAndReload(logStart, recoveredEnd)
// loads the newest valid snapshot at or below the recovered end (corrupt ones
// are deleted) and returns the offset to replay from; the Log replays every
// batch header from there with Replay/ReplayMarker, then calls
// UpdateMapEndOffset(recoveredEnd) and TakeSnapshot.
//
// Differences from Kafka 4.x: the snapshot reader rejects trailing bytes
// after the entries, which Kafka's schema reader would ignore; guards are
// numbers unique within the Manager rather than objects.
package producerstate
