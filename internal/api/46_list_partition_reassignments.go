package api

// ListPartitionReassignments (key 46), version 0: the pinned Kafka
// release's range.
//
// Behaviour as Kafka's: the partitions with a reassignment in progress, each
// with its replicas (the union of the old and the target ones) and its
// adding and removing replicas; null topics mean every topic, and listed
// topics or partitions that are unknown or not being reassigned are left
// out. A broker forwards the request to the active controller, so the
// answer reflects every committed change.
//
// Deviations: no authorizer, so CLUSTER_AUTHORIZATION_FAILED never occurs.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newListPartitionReassignmentsHandler(_ *Registry, deps Deps) (Handler, bool) {
	pr, ok := deps.ControlPlane.(PartitionReassigner)
	if !ok {
		return Handler{}, false
	}
	return Handler{
		Key:        46,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ListPartitionReassignmentsRequest)
			return Reply(listPartitionReassignments(ctx, pr, body))
		},
	}, true
}

func listPartitionReassignments(ctx context.Context, pr PartitionReassigner, req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	ctx, cancel := requestTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	resp, err := pr.ListPartitionReassignments(ctx, req)
	if err != nil {
		resp = kmsg.NewPtrListPartitionReassignmentsResponse()
		resp.ErrorCode, resp.ErrorMessage = ControlPlaneErrorCode(err), errorMessage(err)
	}
	resp.SetVersion(req.Version)
	return resp
}
