package api

// The broker listeners' handler set (Kafka's KafkaApis): what clients and
// other brokers ask of a broker. Admin requests go to the active controller
// through AdminController, locally or forwarded.

import (
	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/logging"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/quota"
)

// BrokerDeps are the components behind the broker listeners' handlers. A
// nil field leaves out the handlers that need it, so a test can build a
// registry of one plane.
type BrokerDeps struct {
	// Membership forwards AddRaftVoter and RemoveRaftVoter to the active
	// controller, as Kafka's brokers do (kafka-metadata-quorum
	// --bootstrap-server add-controller / remove-controller).
	Membership QuorumMembership
	// Config is this node's static configuration (node.id,
	// auto.create.topics.enable, delete.topic.enable, topic defaults).
	Config *config.Config
	// Metadata is this node's view of the cluster metadata; the data plane
	// also uses it, when set, to name current leaders (KIP-951).
	Metadata MetadataView
	// Admin is the active controller, reached locally or forwarded.
	Admin AdminController
	// ProducerIDs hands out producer ids (InitProducerId).
	ProducerIDs ProducerIDSource
	// LogDirs describes the log directories (DescribeLogDirs).
	LogDirs LogDirSource
	// Data is the replica manager and the fetch settings.
	Data *DataPlaneDeps
	// Groups is the group coordinator.
	Groups *GroupPlaneDeps
	// Txns is the transaction coordinator.
	Txns *TxnPlaneDeps
	// Shares are the share groups' components (KIP-932); nil leaves the
	// share APIs out.
	Shares *SharePlaneDeps
	// Loggers are the node's log levels (the BROKER_LOGGER resource); nil
	// refuses the resource.
	Loggers *logging.Levels
	// Quotas are the client quotas, applied by BrokerHandlersWithQuotas
	// (quota_hooks.go); BrokerHandlers leaves them out.
	Quotas *quota.Managers
}

// SharePlaneDeps are the share groups' components (KIP-932).
type SharePlaneDeps struct {
	// Groups is the group coordinator's share-group side, and Offsets its
	// offsets administration.
	Groups  ShareGroupCoordinator
	Offsets ShareOffsetsCoordinator
	// Fetcher is the broker's share-partition manager.
	Fetcher ShareFetcher
	// Coordinator is the share coordinator (__share_group_state), and
	// Locator the same, finding it for FindCoordinator's share keys.
	Coordinator SharePlane
	Locator     ShareLocator
}

// BrokerRelease is the vector a broker listener advertises: the pinned
// Kafka release's broker vector.
func BrokerRelease() Release { return PinnedRelease() }

// BrokerHandlers is the broker listeners' handler set, one handler a line,
// grouped by the dependencies they need. NewRegistry adds ApiVersions.
func BrokerHandlers(d BrokerDeps) []Handler {
	hs := []Handler{newSASLHandshakeHandler(), newSASLAuthenticateHandler()}
	if d.Data != nil && d.Data.Partitions != nil {
		hs = append(hs,
			newProduceHandler(d.Data, d.Metadata),
			newFetchHandler(d.Data, d.Metadata),
			newListOffsetsHandler(d.Data.Partitions),
			newDeleteRecordsHandler(d.Data.Partitions),
			newOffsetForLeaderEpochHandler(d.Data.Partitions),
			newDescribeProducersHandler(d.Data.Partitions),
		)
	}
	if d.Data != nil && d.Data.Markers != nil {
		hs = append(hs, newWriteTxnMarkersHandler(d.Data.Markers))
	}
	if d.Groups != nil && d.Groups.Coordinator != nil {
		hs = append(hs,
			newOffsetCommitHandler(d.Groups),
			newOffsetFetchHandler(d.Groups),
			newFindCoordinatorHandler(d.Groups, d.Txns, d.shareLocator()),
			newJoinGroupHandler(d.Groups),
			newHeartbeatHandler(d.Groups),
			newLeaveGroupHandler(d.Groups),
			newSyncGroupHandler(d.Groups),
			newDescribeGroupsHandler(d.Groups),
			newListGroupsHandler(d.Groups),
			newDeleteGroupsHandler(d.Groups),
			newOffsetDeleteHandler(d.Groups),
			newConsumerGroupHeartbeatHandler(d.Groups),
			newConsumerGroupDescribeHandler(d.Groups),
		)
	}
	if d.Groups != nil && d.Groups.TxnOffsets != nil {
		hs = append(hs, newTxnOffsetCommitHandler(d.Groups))
	}
	if d.Txns != nil && d.Txns.Coordinator != nil {
		hs = append(hs,
			newAddPartitionsToTxnHandler(d.Txns),
			newAddOffsetsToTxnHandler(d.Txns),
			newEndTxnHandler(d.Txns),
			newDescribeTransactionsHandler(d.Txns),
			newListTransactionsHandler(d.Txns),
		)
	}
	if s := d.Shares; s != nil {
		hs = append(hs,
			newShareGroupHeartbeatHandler(s.Groups),
			newShareGroupDescribeHandler(s.Groups),
			newShareFetchHandler(s.Fetcher, d.Metadata),
			newShareAcknowledgeHandler(s.Fetcher, d.Metadata),
			newInitializeShareGroupStateHandler(s.Coordinator),
			newReadShareGroupStateHandler(s.Coordinator),
			newWriteShareGroupStateHandler(s.Coordinator),
			newDeleteShareGroupStateHandler(s.Coordinator),
			newReadShareGroupStateSummaryHandler(s.Coordinator),
			newDescribeShareGroupOffsetsHandler(s.Offsets),
			newAlterShareGroupOffsetsHandler(s.Offsets, d.imageOrEmpty),
			newDeleteShareGroupOffsetsHandler(s.Offsets),
		)
	}
	if d.Config != nil && d.Metadata != nil {
		hs = append(hs,
			newDescribeConfigsHandler(d.Config, d.Metadata, d.Loggers),
			newDescribeClusterHandler(d.Config, d.Metadata),
			newDescribeTopicPartitionsHandler(d.Config, d.Metadata),
		)
	}
	if d.Metadata != nil {
		hs = append(hs,
			newDescribeACLsHandler(d.Metadata),
			newDescribeClientQuotasHandler(d.Metadata),
			newDescribeUserSCRAMCredentialsHandler(d.Metadata),
			newListConfigResourcesHandler(d.Metadata),
		)
	}
	if d.Config != nil && d.Metadata != nil && d.Admin != nil {
		hs = append(hs, newMetadataHandler(d.Config, d.Metadata, d.Admin))
	}
	if d.Config != nil && d.Admin != nil {
		hs = append(hs,
			newCreateTopicsHandler(d.Config, d.Admin),
			newDeleteTopicsHandler(d.Config, d.Admin, d.Metadata),
		)
	}
	if d.Membership != nil {
		hs = append(hs, newAddRaftVoterHandler(d.Membership), newRemoveRaftVoterHandler(d.Membership))
	}
	if d.Admin != nil {
		hs = append(hs,
			newAlterConfigsHandler(d.Admin),
			newCreatePartitionsHandler(d.Admin),
			newElectLeadersHandler(d.Admin),
			newIncrementalAlterConfigsHandler(d.Admin, d.Config, d.Loggers),
			newAlterPartitionReassignmentsHandler(d.Admin),
			newListPartitionReassignmentsHandler(d.Admin),
			newDescribeQuorumHandler(d.Admin),
			newCreateACLsHandler(d.Admin),
			newDeleteACLsHandler(d.Admin),
			newAlterClientQuotasHandler(d.Admin),
			newAlterUserSCRAMCredentialsHandler(d.Admin),
		)
		hs = append(hs, newUnregisterBrokerHandler(d.Admin))
		hs = append(hs, newUpdateFeaturesHandler(d.Admin))
	}
	if d.ProducerIDs != nil {
		hs = append(hs, newInitProducerIDHandler(d.ProducerIDs, d.Txns))
	}
	if d.LogDirs != nil {
		hs = append(hs, newDescribeLogDirsHandler(d.LogDirs))
		if mover, ok := d.LogDirs.(LogDirMover); ok {
			hs = append(hs, newAlterReplicaLogDirsHandler(mover))
		}
	}
	return hs
}

// shareLocator is the share coordinator, nil without share groups.
func (d BrokerDeps) shareLocator() ShareLocator {
	if d.Shares == nil || d.Shares.Locator == nil {
		return nil
	}
	return d.Shares.Locator
}

// imageOrEmpty is the latest metadata image, empty without metadata.
func (d BrokerDeps) imageOrEmpty() *metadata.Image {
	if d.Metadata == nil {
		return metadata.EmptyImage()
	}
	return d.Metadata.Image()
}
