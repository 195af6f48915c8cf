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
// Recovery after an unclean stop: TruncateAndReload(logStart, recoveredEnd)
// loads the newest valid snapshot at or below the recovered end (corrupt ones
// are deleted) and returns the offset to replay from; the Log replays every
// batch header from there with Replay/ReplayMarker, then calls
// UpdateMapEndOffset(recoveredEnd) and TakeSnapshot.
//
// Differences from Kafka 4.x: the KIP-890 verification guard (a transactional
// batch needing a verified ongoing transaction) is not implemented yet; the
// snapshot reader rejects trailing bytes after the entries, which Kafka's
// schema reader would ignore.
package producerstate
