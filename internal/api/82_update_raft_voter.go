package api

// UpdateRaftVoter (key 82), version 0: the pinned Kafka release's range.
// Served on CONTROLLER listeners: a voter of a dynamic quorum asks the
// leader to record its listeners.
//
// Behaviour as Kafka's: CLUSTER_ACTION on the cluster; the current leader
// and epoch in every answer; FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH for
// another epoch; VOTER_NOT_FOUND for an unknown (id, directory id);
// UNSUPPORTED_VERSION on a static quorum.
//
// A Sluice voter sends it itself (internal/node/quorum_dynamic_update.go)
// when the voter set records other listeners than its own, e.g. after a
// restart on another port; not knowing the leader, it asks another voter,
// whose NOT_LEADER_OR_FOLLOWER answer names it.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newUpdateRaftVoterHandler(q QuorumMembership) Handler {
	return Handler{Key: 82, MinVersion: 0, MaxVersion: 0, Handle: func(ctx context.Context, req *Request) Response {
		body := req.Body.(*kmsg.UpdateRaftVoterRequest)
		var resp *kmsg.UpdateRaftVoterResponse
		if err := req.clusterRefusal(opClusterAction); err != nil {
			resp = kmsg.NewPtrUpdateRaftVoterResponse()
			resp.ErrorCode = ControllerErrorCode(err)
		} else {
			resp = q.UpdateRaftVoter(ctx, body)
		}
		resp.SetVersion(body.Version)
		return Reply(resp)
	}}
}
