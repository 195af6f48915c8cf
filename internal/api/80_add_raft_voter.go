package api

// AddRaftVoter (key 80), versions 0-1: the pinned Kafka release's range.
// Served on CONTROLLER listeners (kafka-metadata-quorum --bootstrap-controller
// add-controller); the active controller adds the voter to a dynamic
// quorum (KIP-853). See internal/quorum's membership.go and docs/quorum.md.
//
// Behaviour as Kafka's: ALTER on the cluster; the voter's id, directory id
// and listeners (one must be the first of controller.listener.names, else
// INVALID_REQUEST); NOT_LEADER_OR_FOLLOWER on a voter that does not lead;
// UNSUPPORTED_VERSION on a static quorum (kraft.version 0);
// REQUEST_TIMED_OUT while an earlier change is pending or the leader has
// not committed its epoch, and when the new voter does not catch up in
// time; DUPLICATE_VOTER for an id that already votes.
//
// Deviations: the new voter catches up as a Raft learner added for the
// request (Kafka requires it to be an observer that already fetched), and
// is removed again when it does not catch up within TimeoutMs; the answer
// always waits for the commit (AckWhenCommitted false is answered at
// commit too); no ApiVersions probe of the new voter's kraft.version.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// QuorumMembership changes a dynamic quorum's voters
// (*quorumctl.QuorumController).
type QuorumMembership interface {
	AddRaftVoter(ctx context.Context, req *kmsg.AddRaftVoterRequest) *kmsg.AddRaftVoterResponse
	RemoveRaftVoter(ctx context.Context, req *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse
	UpdateRaftVoter(ctx context.Context, req *kmsg.UpdateRaftVoterRequest) *kmsg.UpdateRaftVoterResponse
}

func newAddRaftVoterHandler(q QuorumMembership) Handler {
	return Handler{Key: 80, MinVersion: 0, MaxVersion: 1, Handle: func(ctx context.Context, req *Request) Response {
		body := req.Body.(*kmsg.AddRaftVoterRequest)
		var resp *kmsg.AddRaftVoterResponse
		if err := req.clusterRefusal(opAlter); err != nil {
			resp = kmsg.NewPtrAddRaftVoterResponse()
			resp.ErrorCode, resp.ErrorMessage = ControllerErrorCode(err), errorMessage(err)
		} else {
			resp = q.AddRaftVoter(ctx, body)
		}
		resp.SetVersion(body.Version)
		return Reply(resp)
	}}
}
