package api

// The controller API set: the requests brokers and admin tools send to the
// CONTROLLER listener of a KRaft cluster (BrokerRegistration,
// BrokerHeartbeat, and the admin requests a broker forwards). The node
// serves them on a registry of their own, built from ControllerRelease and
// ControllerHandlers, so a broker listener's ApiVersions stays Kafka's broker
// vector.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ControllerPlane is the node as the controller handlers see it. Each
// operation is computed by the active controller, proposed through the
// quorum and answered once committed; a node that is not the active
// controller answers NOT_CONTROLLER (the error wraps ErrNotController).
type ControllerPlane interface {
	BrokerRegistration(ctx context.Context, req *kmsg.BrokerRegistrationRequest) (*kmsg.BrokerRegistrationResponse, error)
	BrokerHeartbeat(ctx context.Context, req *kmsg.BrokerHeartbeatRequest) (*kmsg.BrokerHeartbeatResponse, error)
	AllocateProducerIDs(ctx context.Context, req *kmsg.AllocateProducerIDsRequest) (*kmsg.AllocateProducerIDsResponse, error)
}

// ControllerRelease is the pinned release's vector plus the keys only a
// controller serves (BrokerRegistration 62 v0-4, BrokerHeartbeat 63 v0-1).
func ControllerRelease() Release {
	r := PinnedRelease()
	r.APIs = slices.Clone(r.APIs)
	for _, v := range []VersionRange{{Key: 62, Min: 0, Max: 4}, {Key: 63, Min: 0, Max: 1}, {Key: 67, Min: 0, Max: 0}} {
		if !slices.ContainsFunc(r.APIs, func(a VersionRange) bool { return a.Key == v.Key }) {
			r.APIs = append(r.APIs, v)
		}
	}
	slices.SortFunc(r.APIs, func(a, b VersionRange) int { return int(a.Key) - int(b.Key) })
	return r
}

// MetadataLogServer answers observers' Fetch of __cluster_metadata-0 on a
// CONTROLLER listener (KRaft brokers pull committed metadata this way).
type MetadataLogServer interface {
	FetchMetadataLog(ctx context.Context, req *kmsg.FetchRequest) (*kmsg.FetchResponse, error)
}

// ControllerHandlers are the handlers of the controller-only keys, for
// NewRegistry's extra handlers with ControllerRelease, plus Fetch for the
// metadata log (the controller registry has no data plane).
func ControllerHandlers(cp ControllerPlane, logs MetadataLogServer) []Handler {
	return []Handler{newBrokerRegistrationHandler(cp), newBrokerHeartbeatHandler(cp), newAllocateProducerIDsHandler(cp), newMetadataFetchHandler(logs)}
}

// newMetadataFetchHandler serves Fetch (key 1) on a CONTROLLER listener:
// only __cluster_metadata-0, committed entries only, from the active
// controller (others answer NOT_LEADER_OR_FOLLOWER with the leader they
// know); any other partition is UNKNOWN_TOPIC_OR_PARTITION. Sessions
// (KIP-227) are not kept: every fetch is a full one.
func newMetadataFetchHandler(logs MetadataLogServer) Handler {
	return Handler{
		Key:        1,
		MinVersion: 4,
		MaxVersion: 16,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.FetchRequest)
			resp, err := logs.FetchMetadataLog(ctx, body)
			if err != nil {
				resp = kmsg.NewPtrFetchResponse()
				resp.ErrorCode = ControlPlaneErrorCode(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// newAllocateProducerIDsHandler serves AllocateProducerIds (key 67, v0), a
// broker's request for a block of producer ids; a node that is not the
// active controller answers NOT_CONTROLLER.
func newAllocateProducerIDsHandler(cp ControllerPlane) Handler {
	return Handler{
		Key:        67,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.AllocateProducerIDsRequest)
			resp, err := cp.AllocateProducerIDs(ctx, body)
			if err != nil {
				resp = kmsg.NewPtrAllocateProducerIDsResponse()
				resp.ErrorCode = ControlPlaneErrorCode(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
