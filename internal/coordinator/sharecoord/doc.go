// Package sharecoord is the share coordinator (Kafka 4.4's
// ShareCoordinatorService): it maps each share partition
// ("group:topicId:partition", Kafka's SharePartitionKey) to its partition
// of __share_group_state, runs the share-group state operations
// (InitializeShareGroupState, ReadShareGroupState, WriteShareGroupState,
// DeleteShareGroupState, ReadShareGroupStateSummary) on that partition's
// share.Manager through the coordinator runtime, and answers
// FindCoordinator for share keys (key type 2).
//
// A request is split per share partition, as Kafka splits it, and each
// part runs on its own shard; the answer gathers them in request order.
// Replies that wrote wait for the high watermark (the runtime). The topic
// is created on first lookup with Kafka's share-group state topic configs:
// cleanup.policy=delete and retention.ms=-1, the replication factor capped
// at the unfenced brokers and min.insync.replicas at that factor. Instead
// of retention, every share.coordinator.state.topic.prune.interval.ms the
// records below the oldest of the share partitions' latest snapshots are
// deleted (Options.DeleteRecords), as Kafka prunes the topic.
package sharecoord
