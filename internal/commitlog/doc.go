// Package commitlog is Sluice's storage engine: a partition's segmented log
// in Kafka's on-disk format, and the Manager of the logs of one or more log
// dirs.
//
// # Layout (byte-compatible with Kafka)
//
// A log dir holds one directory per partition, "<topic>-<partition>", plus
// recovery-point-offset-checkpoint, log-start-offset-checkpoint (package
// checkpoint) and, after a clean stop, the .kafka_cleanshutdown marker. A
// partition directory holds segments, each named by its base offset in 20
// digits: "%020d.log" (record batches v2 as received, with only the base
// offset and partition leader epoch rewritten), "%020d.index" (8-byte
// entries: offset relative to the base, position), "%020d.timeindex"
// (12-byte entries: timestamp, relative offset), "%020d.txnindex" (34-byte
// aborted transactions, created at the first abort), producer state snapshots
// "%020d.snapshot" (package producerstate), leader-epoch-checkpoint
// (package epoch) and partition.metadata (package metafile). Index files
// are opened per operation, never held (Kafka's LazyIndex: its mapped
// indexes hold no descriptor either), so a segment holds one open file, its
// .log; a new segment's index files are created by their first write (a
// flush, roll or close) and trimmed to their entries when it is rolled or
// the log is closed. Deleted segments are renamed "*.deleted" and removed
// after file.delete.delay.ms.
//
// # Log
//
//	l, err := commitlog.Open(fsys, dir, tp, opts, clk, commitlog.StartState{...}, logger)
//	info, err := l.Append(batches, leaderEpoch)      // leader: assigns offsets in place
//	info, err := l.AppendAsCoordinator(batches, ep)  // coordinators: no sequence checks
//	g := l.MaybeStartTransactionVerification(pid, seq, epoch) // KIP-890, 0: ongoing
//	info, err := l.AppendVerified(batches, ep, g)    // leader with verification on
//	info, err := l.AppendValidated(&res.Validated, ep, la) // produce: Validate's batch, no second CRC pass
//	info, err := l.AppendTxnMarker(marker, ep)       // COMMIT/ABORT for the coordinator
//	info, err := l.AppendAsFollower(batches)         // follower: offsets kept
//	res, err := l.Read(offset, maxBytes, maxOffset, minOneBatch)
//	res.Slices                                       // []FileSlice{File, Pos, Size}: sendfile them
//	res.WriteTo(w) / res.Bytes()                     // copying alternatives
//	l.CollectAbortedTxns(offset, res.EndOffset)      // read_committed
//	l.LastStableOffset(hw); l.FirstUnstableOffset(); l.ActiveProducers()
//	l.OffsetForTimestamp(ts); l.LastTimestampOffset()
//	l.EndOffsetForEpoch(epoch); l.LatestEpoch()
//	l.TruncateTo(offset); l.TruncateFullyAndStartAt(offset)
//	l.IncrementLogStartOffset(offset)                // DeleteRecords
//	l.SetHighWatermark(hw)                           // bounds retention and DeleteRecords
//	l.ApplyRetention(now); l.Flush(); l.Close(); l.Delete()
//
// Append takes batches validated by records.Validate; it still checks CRCs
// and framing, refuses batches above max.message.bytes, runs the producer
// state checks (a duplicate of one of a producer's last five batches
// writes nothing and returns the original offsets with Duplicate set),
// stamps the epoch, records new epochs in the leader epoch cache, and rolls
// by segment.bytes, segment.ms (minus segment.jitter.ms jitter, measured
// from the first batch's timestamp as Kafka does) and full indexes.
//
// Read returns whole batches, starting with the one holding offset, never
// past maxOffset (exclusive; the high watermark or last stable offset), at
// most maxBytes unless minOneBatch and the first batch alone is larger
// (KIP-74). It returns file ranges, not bytes: readers use positional reads
// only, and a deleted segment's files stay open for file.delete.delay.ms,
// so a response being sent from them completes.
//
// # Durability and failures
//
// Nothing is fsynced on append unless flush.messages / flush.ms say so
// (Kafka's default); Flush syncs and moves the recovery point to the log end
// offset. A roll fsyncs nothing under the log's lock: under a Manager its
// flusher goroutine then syncs the sealed segments, the roll's producer
// snapshot and the directory (Kafka's "flush-log" task) and only then
// moves the recovery point to the new segment's base; a log opened alone
// syncs at the roll. The Manager checkpoints recovery points every
// log.flush.offset.checkpoint.interval.ms and at Close; before each
// checkpoint it also syncs every log's tail off the lock (FlushTail, with
// a producer snapshot at the log end), so the checkpoint vouches for all
// but the last interval's writes, and a truncation that lowers a recovery
// point rewrites the checkpoint at once. After an unclean stop, Open
// re-validates every batch at or above the recovery point (header, CRC,
// offsets per batch), starting inside the segment holding it (the batches
// below are trusted, their headers walked to rebuild the indexes: a
// departure from Kafka, which re-reads that segment whole), cuts a torn or
// corrupt tail, deletes segments after a corrupt one, rebuilds their
// indexes, and replays producer state from the newest snapshot; it syncs
// only a cut, so a log found whole keeps its recovery point and costs no
// fsync (Kafka does not flush at load either). After a clean stop it
// reads only the index tails. A crash before a roll's flush completed can
// leave a hole above the recovery point (a sealed segment's unsynced tail
// lost, a newer segment's name durable): empty segments after it are
// removed, a hole followed by data is kept as Kafka keeps it; only a hole
// below the recovery point is a lost segment.
//
// A full disk (ENOSPC) fails the append with ErrStorage and leaves the log
// readable. Any other I/O error takes the log offline (ErrOffline from then
// on); under a Manager the whole log dir goes offline.
//
// # Compaction hooks
//
// The log cleaner (package commitlog/cleaner) reads a log through
// CleanState and Read, writes each compacted group of segments with
// BeginCleanedSegment / CleanedSegment.Append, and swaps it in with
// ReplaceSegments: the ".cleaned" files are synced and renamed ".swap"
// (the commit point), the replaced segments renamed ".deleted", then the
// ".swap" files take their live names. Open removes ".cleaned" leftovers
// and finishes a committed swap (a "<base>.log.swap"): live segments inside
// its offset range go, its files are renamed. Without the delete policy
// (Options.SkipRetention) retention.ms and retention.bytes delete nothing.
//
// # Manager
//
//	m, err := commitlog.NewManager(fsys, commitlog.DefaultManagerOptions(dirs...), clk, logger)
//	m.Start(ctx)                                    // retention, flush, checkpoints, file deletion
//	                                                // (the rolls' flusher runs from NewManager)
//	l, err := m.GetOrCreate(tp, topicID, opts)
//	m.Get(tp); m.Logs(); m.OfflineDirs()
//	m.Delete(tp)                                    // renamed "<tp>.<id>-delete", removed after the delay
//	m.Close()                                       // flush, checkpoints, clean-shutdown marker
//
// Options are per log (topic configs) and can be replaced with SetOptions.
//
// # Moves between log dirs (AlterReplicaLogDirs, KIP-113)
//
//	m.AlterLogDir(tp, dest)   // a future log "<tp>.<uuid>-future" in dest
//	m.FutureLogs()            // DescribeLogDirs: is_future, offset lag
//
// The Manager's mover goroutine fills the future log from the current one
// (PlanCopy, a pure step function) while appends continue, and once it has
// caught up swaps it in under the current log's lock: the current dir is
// renamed "<tp>.<uuid>-delete", the future renamed "<tp>", and the *Log
// keeps serving from its new place (adoptLocked). PlanStartup finishes,
// resumes or discards a move a crash interrupted. SetDirOfflineHandler
// tells the node of each failed dir (it halts when none is left).
//
// Lock order: the Manager's moveMu (moves) before a Log's mutex, a Log's
// mutex before the Manager's (a Log reports a disk failure to its Manager
// while holding its own lock; the swap updates the Manager under the
// current log's lock); the Manager never calls into a Log while holding
// its mutex, and does no file I/O under it.
package commitlog
