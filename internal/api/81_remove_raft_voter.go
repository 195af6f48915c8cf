package api

// RemoveRaftVoter (key 81), version 0: the pinned Kafka release's range.
// Served on CONTROLLER listeners (kafka-metadata-quorum --bootstrap-controller
// remove-controller --controller-id N --controller-directory-id D).
//
// Behaviour as Kafka's: ALTER on the cluster; NOT_LEADER_OR_FOLLOWER on a
// voter that does not lead; UNSUPPORTED_VERSION on a static quorum;
// REQUEST_TIMED_OUT while an earlier change is pending; VOTER_NOT_FOUND
// when no voter has that id and directory id, or when it is the last
// voter. A leader that removes itself resigns once the removal commits.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newRemoveRaftVoterHandler(q QuorumMembership) Handler {
	return Handler{Key: 81, MinVersion: 0, MaxVersion: 0, Handle: func(ctx context.Context, req *Request) Response {
		body := req.Body.(*kmsg.RemoveRaftVoterRequest)
		var resp *kmsg.RemoveRaftVoterResponse
		if err := req.clusterRefusal(opAlter); err != nil {
			resp = kmsg.NewPtrRemoveRaftVoterResponse()
			resp.ErrorCode, resp.ErrorMessage = ControllerErrorCode(err), errorMessage(err)
		} else {
			resp = q.RemoveRaftVoter(ctx, body)
		}
		resp.SetVersion(body.Version)
		return Reply(resp)
	}}
}
