package api

// ReadShareGroupStateSummary (key 87), versions 0-1: the pinned release's
// range (v1 adds the delivery-complete count, KIP-1226). The group
// coordinator reads share partitions' start offsets for
// DescribeShareGroupOffsets; it writes nothing. Authorization and
// registration: see 83_initialize_share_group_state.go.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newReadShareGroupStateSummaryHandler(sp SharePlane) Handler {
	return Handler{
		Key: 87, MinVersion: 0, MaxVersion: 1,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.ReadShareGroupStateSummaryRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("read share group state summary: unexpected body %T", req.Body))
			}
			if !req.authorizeCluster(opClusterAction) {
				return Reply(readShareGroupStateSummaryRefused(body))
			}
			resp := sp.ReadStateSummary(ctx, body)
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

func readShareGroupStateSummaryRefused(req *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse {
	resp := kmsg.NewPtrReadShareGroupStateSummaryResponse()
	resp.SetVersion(req.Version)
	code, msg := shareStateRefusal()
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
