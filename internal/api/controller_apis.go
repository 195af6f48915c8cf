package api

// The CONTROLLER listeners' handler set (Kafka's ControllerApis): what
// brokers and admin tools ask of a controller of a KRaft quorum. The node
// serves it on a registry of its own, so a broker listener's ApiVersions
// stays Kafka's broker vector.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/logging"
)

// BrokerControl is the active controller as the brokers' own requests
// reach it on a CONTROLLER listener (*quorumctl.QuorumController). Each
// operation is computed by this node's controller, proposed through the
// quorum and answered once committed; a node that is not the active
// controller fails with an error wrapping ErrNotController (NOT_CONTROLLER).
type BrokerControl interface {
	BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (*kmsg.BrokerRegistrationResponse, error)
	BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) (*kmsg.BrokerHeartbeatResponse, error)
	AllocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) (*kmsg.AllocateProducerIDsResponse, error)
	AlterPartition(ctx context.Context, req *kmsg.AlterPartitionRequest) (*kmsg.AlterPartitionResponse, error)
	AssignReplicasToDirs(ctx context.Context, req *kmsg.AssignReplicasToDirsRequest) (*kmsg.AssignReplicasToDirsResponse, error)
}

// QuorumControl is this voter's part in the metadata quorum
// (*quorumctl.QuorumController), for DescribeQuorum on a CONTROLLER
// listener.
type QuorumControl interface {
	// DescribeQuorum describes the quorum; a voter that does not lead it
	// fails with ErrNotController.
	DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error)
	// Leader is the quorum leader this voter knows (-1: none).
	Leader() int32
}

// MetadataLogServer serves the committed metadata log to observers (KRaft
// brokers pull it from the active controller; *quorum.LogServer).
type MetadataLogServer interface {
	FetchMetadataLog(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error)
	// FetchSnapshot answers a request already checked to name exactly
	// __cluster_metadata-0.
	FetchSnapshot(ctx context.Context, req *kmsg.FetchSnapshotRequest) (*kmsg.FetchSnapshotResponse, error)
}

// ControllerDeps are the components behind the CONTROLLER listeners'
// handlers. A nil field leaves out the handlers that need it.
type ControllerDeps struct {
	// Config, Metadata, Admin, ProducerIDs and LogDirs are as in
	// BrokerDeps: a controller listener serves the same admin requests.
	Config      *config.Config
	Metadata    MetadataView
	Admin       AdminController
	ProducerIDs ProducerIDSource
	LogDirs     LogDirSource
	// Brokers is this node's controller for the brokers' registrations,
	// heartbeats, producer id blocks and ISR changes.
	Brokers BrokerControl
	// Quorum is this voter, for DescribeQuorum.
	Quorum QuorumControl
	// Membership changes a dynamic quorum's voters (AddRaftVoter,
	// RemoveRaftVoter, UpdateRaftVoter).
	Membership QuorumMembership
	// MetadataLog serves the metadata log and its snapshots to observers.
	MetadataLog MetadataLogServer
	// Loggers are as in BrokerDeps.
	Loggers *logging.Levels
	// Controllers lists the voters' endpoints for DescribeCluster (KIP-919).
	Controllers ControllerDirectory
}

// controllerOnlyKeys are the keys a CONTROLLER listener serves beyond the
// broker vector, with the pinned release's controller ranges.
func controllerOnlyKeys() []VersionRange {
	return []VersionRange{
		{Key: 56, Min: 0, Max: 3}, // AlterPartition
		{Key: 59, Min: 0, Max: 1}, // FetchSnapshot
		{Key: 62, Min: 0, Max: 4}, // BrokerRegistration
		{Key: 63, Min: 0, Max: 1}, // BrokerHeartbeat
		{Key: 67, Min: 0, Max: 0}, // AllocateProducerIds
		{Key: 73, Min: 0, Max: 0}, // AssignReplicasToDirs
		{Key: 82, Min: 0, Max: 0}, // UpdateRaftVoter
	}
}

// ControllerListenerRelease is the vector a CONTROLLER listener
// advertises: the pinned release's broker vector plus the controller-only
// keys, sorted by key.
func ControllerListenerRelease() Release {
	r := PinnedRelease()
	for _, v := range controllerOnlyKeys() {
		if !slices.ContainsFunc(r.APIs, func(a VersionRange) bool { return a.Key == v.Key }) {
			r.APIs = append(r.APIs, v)
		}
	}
	slices.SortFunc(r.APIs, func(a, b VersionRange) int { return int(a.Key) - int(b.Key) })
	return r
}

// ControllerHandlers is the CONTROLLER listeners' handler set, one handler
// a line, grouped by the dependencies they need. NewRegistry adds
// ApiVersions.
func ControllerHandlers(d ControllerDeps) []Handler {
	hs := []Handler{newSASLHandshakeHandler(), newSASLAuthenticateHandler()}
	if d.Config != nil && d.Metadata != nil {
		hs = append(hs, newDescribeConfigsHandler(d.Config, d.Metadata, d.Loggers))
	}
	if d.Metadata != nil && d.Controllers != nil {
		hs = append(hs, newDescribeControllersHandler(d.Metadata, d.Controllers))
	}
	if d.Metadata != nil {
		hs = append(hs, newDescribeACLsHandler(d.Metadata))
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
	if d.Admin != nil {
		hs = append(hs,
			newAlterConfigsHandler(d.Admin),
			newCreatePartitionsHandler(d.Admin),
			newElectLeadersHandler(d.Admin),
			newIncrementalAlterConfigsHandler(d.Admin, d.Config, d.Loggers),
			newAlterPartitionReassignmentsHandler(d.Admin),
			newListPartitionReassignmentsHandler(d.Admin),
			newCreateACLsHandler(d.Admin),
			newDeleteACLsHandler(d.Admin),
			newAlterClientQuotasHandler(d.Admin),
			newAlterUserSCRAMCredentialsHandler(d.Admin),
		)
		hs = append(hs, newUnregisterBrokerHandler(d.Admin))
		hs = append(hs, newUpdateFeaturesHandler(d.Admin))
	}
	if d.ProducerIDs != nil {
		hs = append(hs, newInitProducerIDHandler(d.ProducerIDs, nil))
	}
	if d.LogDirs != nil {
		hs = append(hs, newDescribeLogDirsHandler(d.LogDirs))
	}
	if d.Brokers != nil {
		hs = append(hs,
			newAlterPartitionHandler(d.Brokers),
			newBrokerRegistrationHandler(d.Brokers),
			newBrokerHeartbeatHandler(d.Brokers),
			newAllocateProducerIDsHandler(d.Brokers),
			newAssignReplicasToDirsHandler(d.Brokers),
		)
	}
	if d.Quorum != nil {
		hs = append(hs, newControllerDescribeQuorumHandler(d.Quorum))
	}
	if d.Membership != nil {
		hs = append(hs, newAddRaftVoterHandler(d.Membership), newRemoveRaftVoterHandler(d.Membership), newUpdateRaftVoterHandler(d.Membership))
	}
	if d.MetadataLog != nil {
		hs = append(hs,
			newMetadataLogFetchHandler(d.MetadataLog),
			newFetchSnapshotHandler(d.MetadataLog),
		)
	}
	return hs
}
