package api

// InitializeShareGroupState (key 83), version 0: the pinned release's
// range. The group coordinator sends it to the share coordinator to set a
// share partition's start offset and state epoch (KIP-932).
//
// The five share-group state APIs (83-87) are inter-broker APIs served by
// the share coordinator (coordinator/sharecoord), which answers per share
// partition. Authorization as Kafka's: CLUSTER_ACTION on the cluster, else
// every partition answers CLUSTER_AUTHORIZATION_FAILED
// (toGlobalErrorResponse). The handlers are not registered until share
// groups are served end to end.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// SharePlane is the share coordinator's state API;
// *sharecoord.ShareCoordinator implements it.
type SharePlane interface {
	InitializeState(ctx context.Context, req *kmsg.InitializeShareGroupStateRequest) *kmsg.InitializeShareGroupStateResponse
	ReadState(ctx context.Context, req *kmsg.ReadShareGroupStateRequest) *kmsg.ReadShareGroupStateResponse
	WriteState(ctx context.Context, req *kmsg.WriteShareGroupStateRequest) *kmsg.WriteShareGroupStateResponse
	DeleteState(ctx context.Context, req *kmsg.DeleteShareGroupStateRequest) *kmsg.DeleteShareGroupStateResponse
	ReadStateSummary(ctx context.Context, req *kmsg.ReadShareGroupStateSummaryRequest) *kmsg.ReadShareGroupStateSummaryResponse
}

// shareStateRefusal is the code and message of a partition refused
// CLUSTER_ACTION.
func shareStateRefusal() (int16, *string) {
	msg := kerr.ClusterAuthorizationFailed.Description
	return kerr.ClusterAuthorizationFailed.Code, &msg
}

func newInitializeShareGroupStateHandler(sp SharePlane) Handler {
	return Handler{
		Key: 83, MinVersion: 0, MaxVersion: 0,
		Handle: func(ctx context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.InitializeShareGroupStateRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("initialize share group state: unexpected body %T", req.Body))
			}
			if !req.authorizeCluster(opClusterAction) {
				return Reply(initializeShareGroupStateRefused(body))
			}
			resp := sp.InitializeState(ctx, body)
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

func initializeShareGroupStateRefused(req *kmsg.InitializeShareGroupStateRequest) *kmsg.InitializeShareGroupStateResponse {
	resp := kmsg.NewPtrInitializeShareGroupStateResponse()
	resp.SetVersion(req.Version)
	code, msg := shareStateRefusal()
	for _, t := range req.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, code, msg
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
