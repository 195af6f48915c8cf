// Package cleaner is Sluice's log cleaner: it compacts the logs whose
// cleanup.policy holds "compact", keeping the latest record of each key, as
// Kafka's LogCleaner does, in Kafka's on-disk format.
//
// # Use
//
//	c, err := cleaner.New(fsys, mgr, cleaner.Options{...}, clk, registry, logger)
//	c.Start(ctx)          // log.cleaner.threads goroutines
//	...
//	c.Stop(ctx)           // before the commitlog.Manager closes
//	c.CleanOnce(ctx)      // one synchronous pass (tests, tools)
//
// mgr is any LogSource (*commitlog.Manager is one). Each pass reads every
// log's current commitlog.Options, so topic config changes (cleanup.policy,
// min.cleanable.dirty.ratio, the compaction lags, delete.retention.ms) apply
// without a restart once the node calls Log.SetOptions.
//
// # Choosing a log
//
// A pass takes the log with the largest dirty ratio (bytes not cleaned yet
// over the cleanable bytes) above min.cleanable.dirty.ratio, or one whose
// oldest dirty data is older than max.compaction.lag.ms; with none, a log
// whose tombstones' delete horizon has passed. The dirty range starts at
// the log's entry in its log dir's cleaner-offset-checkpoint and ends
// before the active segment, the last stable offset and any segment younger
// than min.compaction.lag.ms.
//
// # Cleaning
//
// The dirty range is read into an offset map (key hash -> latest offset)
// of at most log.cleaner.dedupe.buffer.size / threads bytes; when it fills,
// the clean covers only the offsets read so far. Then the inactive segments
// from the log start up to that point are grouped (each group fitting one
// segment) and rewritten, batch by batch (see batchFilter), into a
// ".cleaned" segment that commitlog swaps in crash-safely (".swap", then
// live; commitlog.Log.ReplaceSegments). Offsets never change: a rewritten
// batch keeps its base offset, last offset delta, producer id, epoch, base
// sequence, leader epoch and codec.
//
// Tombstones stay for delete.retention.ms after the clean that first sees
// them, which stamps the KIP-534 delete horizon into their batch header.
// Data batches of aborted transactions (found through the transaction
// index) are dropped and never enter the offset map. Transaction markers
// follow Kafka's rules (txnTracker, filterControl): a marker stays while a
// batch of its transaction is left before it; the clean that finds none
// stamps a delete horizon (delete.retention.ms) into it and leaves an
// aborted transaction out of the cleaned transaction index; a clean after
// the horizon removes it. The last data batch of each producer the log
// tracks is kept, emptied if need be, so its sequence survives, and so is
// the last marker of a producer with no data batch left (its epoch).
//
// # Observability
//
// Prometheus: Kafka's LogCleaner and LogCleanerManager gauges in the JMX
// exporter's names (KafkaCollector: kafka_log_logcleaner_cleaner_recopy_percent,
// _max_clean_time_secs, _max_buffer_utilization_percent,
// _max_compaction_delay_secs, _deadthreadcount;
// kafka_log_logcleanermanager_max_dirty_percent, _time_since_last_run_ms,
// and _uncleanable_partitions_count and _uncleanable_bytes per logdirectory), and
// Sluice's own where Kafka has none: sluice_log_cleaner_runs_total,
// _failures_total, _read_bytes_total, _written_bytes_total,
// _clean_seconds and sluice_log_cleaner_dirty_ratio{topic,partition}.
// Each clean logs one slog line with its range, bytes, records kept and
// MB/s.
package cleaner
