package api

// WriteShareGroupState (key 85), versions 0-1: the pinned release's range
// (v1 adds the delivery-complete count, KIP-1226). A share-partition leader
// persists its state batches and start offset (KIP-932). Authorization and
// registration: see 83_initialize_share_group_state.go.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newWriteShareGroupStateHandler(sp SharePlane) Handler {
	return Handler{
		Key: 85, MinVersion: 0, MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.WriteShareGroupStateRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("write share group state: unexpected body %T", req.Body))
			}
			if !req.authorizeCluster(opClusterAction) {
				return Reply(writeShareGroupStateRefused(body))
			}
			resp := sp.WriteState(ctx, body)
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

func writeShareGroupStateRefused(req *kmsg.WriteShareGroupStateRequest) *kmsg.WriteShareGroupStateResponse {
	resp := kmsg.NewPtrWriteShareGroupStateResponse()
	resp.SetVersion(req.Version)
	code, msg := shareStateRefusal()
	for _, t := range req.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
