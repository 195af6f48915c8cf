package api

// ReadShareGroupState (key 84), version 0: the pinned release's range. A
// share-partition leader reads the state it loads (KIP-932); a read with
// a newer leader epoch is recorded before the answer. Authorization and
// registration: see 83_initialize_share_group_state.go.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newReadShareGroupStateHandler(sp SharePlane) Handler {
	return Handler{
		Key: 84, MinVersion: 0, MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.ReadShareGroupStateRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("read share group state: unexpected body %T", req.Body))
			}
			if !req.authorizeCluster(opClusterAction) {
				return Reply(readShareGroupStateRefused(body))
			}
			resp := sp.ReadState(ctx, body)
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

func readShareGroupStateRefused(req *kmsg.ReadShareGroupStateRequest) *kmsg.ReadShareGroupStateResponse {
	resp := kmsg.NewPtrReadShareGroupStateResponse()
	resp.SetVersion(req.Version)
	code, msg := shareStateRefusal()
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
