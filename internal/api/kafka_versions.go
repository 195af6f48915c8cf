package api

// This file is the ApiVersions vector and KIP-584 feature set of the Kafka
// release Sluice imitates (KAFKA_VERSION at the repository root). kafka-python
// guesses a broker's release from this vector and sarama pins versions by
// release, so Sluice advertises a vector shaped like one real release,
// restricted to the keys it serves.
//
// Captured from Apache Kafka 4.4.0, a single combined KRaft node started by
// the reference kit, with:
//
//	bench/kafka-ref start
//	go run ./bench/cmd/kafka-apicheck --bootstrap <addr> --request-version 5 \
//	    --dump-raw internal/api/testdata/apiversions/kafka-4.4.0-v5.bin
//
// TestApiVersionsMatchesKafkaBytes checks this table against those bytes. The
// telemetry keys 71 and 72 are absent because Kafka only lists them when a
// client metrics reporter is configured.

// VersionRange is one API key's served or advertised version range.
type VersionRange struct {
	Key int16
	Min int16
	Max int16
}

// FeatureRange is a KIP-584 supported feature: the levels a node can run.
type FeatureRange struct {
	Name string
	Min  int16
	Max  int16
}

// FinalizedFeature is a KIP-584 feature level finalized for the cluster.
type FinalizedFeature struct {
	Name  string
	Level int16
}

// Release is what one Kafka release's broker listener advertises.
type Release struct {
	Name string
	// APIs is sorted by key, as Kafka lists them.
	APIs []VersionRange
	// Supported is the broker's supported feature ranges in the order Kafka
	// lists them.
	Supported []FeatureRange
	// Finalized is what a freshly formatted single-node KRaft cluster of this
	// release finalizes, in Kafka's order; a level 0 is never advertised.
	Finalized []FinalizedFeature
	// FinalizedEpoch is the metadata offset that single node reported as the
	// finalized features' epoch.
	FinalizedEpoch int64
}

// PinnedRelease returns the Kafka release Sluice's broker listener imitates.
// It builds a fresh value each call, so callers may keep and modify it.
func PinnedRelease() Release {
	return Release{
		Name: "4.4.0",
		APIs: []VersionRange{
			{Key: 0, Min: 0, Max: 13}, // Produce
			{Key: 1, Min: 4, Max: 18}, // Fetch
			{Key: 2, Min: 1, Max: 11}, // ListOffsets
			{Key: 3, Min: 0, Max: 13}, // Metadata
			{Key: 8, Min: 2, Max: 10}, // OffsetCommit
			{Key: 9, Min: 1, Max: 10}, // OffsetFetch
			{Key: 10, Min: 0, Max: 6}, // FindCoordinator
			{Key: 11, Min: 0, Max: 9}, // JoinGroup
			{Key: 12, Min: 0, Max: 4}, // Heartbeat
			{Key: 13, Min: 0, Max: 5}, // LeaveGroup
			{Key: 14, Min: 0, Max: 5}, // SyncGroup
			{Key: 15, Min: 0, Max: 6}, // DescribeGroups
			{Key: 16, Min: 0, Max: 5}, // ListGroups
			{Key: 17, Min: 0, Max: 1}, // SASLHandshake
			{Key: 18, Min: 0, Max: 5}, // ApiVersions
			{Key: 19, Min: 2, Max: 7}, // CreateTopics
			{Key: 20, Min: 1, Max: 6}, // DeleteTopics
			{Key: 21, Min: 0, Max: 2}, // DeleteRecords
			{Key: 22, Min: 0, Max: 5}, // InitProducerID
			{Key: 23, Min: 2, Max: 4}, // OffsetForLeaderEpoch
			{Key: 24, Min: 0, Max: 5}, // AddPartitionsToTxn
			{Key: 25, Min: 0, Max: 4}, // AddOffsetsToTxn
			{Key: 26, Min: 0, Max: 5}, // EndTxn
			{Key: 27, Min: 1, Max: 2}, // WriteTxnMarkers
			{Key: 28, Min: 0, Max: 6}, // TxnOffsetCommit
			{Key: 29, Min: 1, Max: 3}, // DescribeACLs
			{Key: 30, Min: 1, Max: 3}, // CreateACLs
			{Key: 31, Min: 1, Max: 3}, // DeleteACLs
			{Key: 32, Min: 1, Max: 4}, // DescribeConfigs
			{Key: 33, Min: 0, Max: 2}, // AlterConfigs
			{Key: 34, Min: 1, Max: 2}, // AlterReplicaLogDirs
			{Key: 35, Min: 1, Max: 5}, // DescribeLogDirs
			{Key: 36, Min: 0, Max: 2}, // SASLAuthenticate
			{Key: 37, Min: 0, Max: 3}, // CreatePartitions
			{Key: 38, Min: 1, Max: 3}, // CreateDelegationToken
			{Key: 39, Min: 1, Max: 2}, // RenewDelegationToken
			{Key: 40, Min: 1, Max: 2}, // ExpireDelegationToken
			{Key: 41, Min: 1, Max: 3}, // DescribeDelegationToken
			{Key: 42, Min: 0, Max: 3}, // DeleteGroups
			{Key: 43, Min: 0, Max: 2}, // ElectLeaders
			{Key: 44, Min: 0, Max: 1}, // IncrementalAlterConfigs
			{Key: 45, Min: 0, Max: 1}, // AlterPartitionAssignments
			{Key: 46, Min: 0, Max: 0}, // ListPartitionReassignments
			{Key: 47, Min: 0, Max: 0}, // OffsetDelete
			{Key: 48, Min: 0, Max: 1}, // DescribeClientQuotas
			{Key: 49, Min: 0, Max: 1}, // AlterClientQuotas
			{Key: 50, Min: 0, Max: 0}, // DescribeUserSCRAMCredentials
			{Key: 51, Min: 0, Max: 0}, // AlterUserSCRAMCredentials
			{Key: 55, Min: 0, Max: 2}, // DescribeQuorum
			{Key: 57, Min: 0, Max: 2}, // UpdateFeatures
			{Key: 60, Min: 0, Max: 2}, // DescribeCluster
			{Key: 61, Min: 0, Max: 0}, // DescribeProducers
			{Key: 64, Min: 0, Max: 0}, // UnregisterBroker
			{Key: 65, Min: 0, Max: 0}, // DescribeTransactions
			{Key: 66, Min: 0, Max: 2}, // ListTransactions
			{Key: 68, Min: 0, Max: 1}, // ConsumerGroupHeartbeat
			{Key: 69, Min: 0, Max: 1}, // ConsumerGroupDescribe
			{Key: 74, Min: 0, Max: 1}, // ListConfigResources
			{Key: 75, Min: 0, Max: 0}, // DescribeTopicPartitions
			{Key: 76, Min: 1, Max: 1}, // ShareGroupHeartbeat
			{Key: 77, Min: 1, Max: 1}, // ShareGroupDescribe
			{Key: 78, Min: 1, Max: 2}, // ShareFetch
			{Key: 79, Min: 1, Max: 2}, // ShareAcknowledge
			{Key: 80, Min: 0, Max: 1}, // AddRaftVoter
			{Key: 81, Min: 0, Max: 0}, // RemoveRaftVoter
			{Key: 83, Min: 0, Max: 0}, // InitializeShareGroupState
			{Key: 84, Min: 0, Max: 0}, // ReadShareGroupState
			{Key: 85, Min: 0, Max: 1}, // WriteShareGroupState
			{Key: 86, Min: 0, Max: 0}, // DeleteShareGroupState
			{Key: 87, Min: 0, Max: 1}, // ReadShareGroupStateSummary
			{Key: 88, Min: 0, Max: 1}, // StreamsGroupHeartbeat
			{Key: 89, Min: 0, Max: 1}, // StreamsGroupDescribe
			{Key: 90, Min: 0, Max: 1}, // DescribeShareGroupOffsets
			{Key: 91, Min: 0, Max: 0}, // AlterShareGroupOffsets
			{Key: 92, Min: 0, Max: 0}, // DeleteShareGroupOffsets
			{Key: 93, Min: 0, Max: 0}, // StreamsGroupTopologyDescriptionUpdate
			{Key: 94, Min: 0, Max: 0}, // UnregisterController
		},
		Supported: []FeatureRange{
			{Name: "group.version", Min: 0, Max: 1},
			{Name: "kraft.version", Min: 0, Max: 1},
			{Name: "metadata.version", Min: 7, Max: 33},
			{Name: "share.version", Min: 0, Max: 2},
			{Name: "streams.version", Min: 0, Max: 1},
			{Name: "transaction.version", Min: 0, Max: 2},
			{Name: "eligible.leader.replicas.version", Min: 0, Max: 1},
		},
		Finalized: []FinalizedFeature{
			{Name: "group.version", Level: 1},
			{Name: "kraft.version", Level: 1},
			{Name: "share.version", Level: 2},
			{Name: "metadata.version", Level: 33},
			{Name: "streams.version", Level: 1},
			{Name: "transaction.version", Level: 2},
			{Name: "eligible.leader.replicas.version", Level: 1},
		},
		FinalizedEpoch: 39,
	}
}
