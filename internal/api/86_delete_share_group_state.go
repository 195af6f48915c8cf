package api

// DeleteShareGroupState (key 86), version 0: the pinned release's range.
// The group coordinator deletes a share group's state (a tombstone per
// share partition). Authorization and registration: see
// 83_initialize_share_group_state.go.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newDeleteShareGroupStateHandler(sp SharePlane) Handler {
	return Handler{
		Key: 86, MinVersion: 0, MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.DeleteShareGroupStateRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("delete share group state: unexpected body %T", req.Body))
			}
			if !req.authorizeCluster(opClusterAction) {
				return Reply(deleteShareGroupStateRefused(body))
			}
			resp := sp.DeleteState(ctx, body)
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

func deleteShareGroupStateRefused(req *kmsg.DeleteShareGroupStateRequest) *kmsg.DeleteShareGroupStateResponse {
	resp := kmsg.NewPtrDeleteShareGroupStateResponse()
	resp.SetVersion(req.Version)
	code, msg := shareStateRefusal()
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
