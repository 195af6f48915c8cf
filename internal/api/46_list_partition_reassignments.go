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
// Authorization: DESCRIBE on the cluster, as Kafka's controller.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newListPartitionReassignmentsHandler(admin AdminController) Handler {
	return Handler{
		Key:        46,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ListPartitionReassignmentsRequest)
			return Reply(listPartitionReassignments(ctx, admin, body, req.clusterRefusal(opDescribe)))
		},
	}
}

// listPartitionReassignments answers req; refusal is the authorization
// error (DESCRIBE on the cluster).
func listPartitionReassignments(ctx context.Context, admin AdminController, req *kmsg.ListPartitionReassignmentsRequest, refusal error) *kmsg.ListPartitionReassignmentsResponse {
	ctx, cancel := requestTimeout(ctx, req.TimeoutMillis)
	defer cancel()
	resp, err := (*kmsg.ListPartitionReassignmentsResponse)(nil), refusal
	if err == nil {
		resp, err = admin.ListPartitionReassignments(ctx, req)
	}
	if err != nil {
		resp = kmsg.NewPtrListPartitionReassignmentsResponse()
		resp.ErrorCode, resp.ErrorMessage = ControllerErrorCode(err), errorMessage(err)
	}
	resp.SetVersion(req.Version)
	return resp
}
