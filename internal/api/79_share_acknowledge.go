package api

// ShareAcknowledge (key 79), versions 1-2: the pinned Kafka release's
// range (KIP-932). A share consumer acknowledges records it acquired
// (accept, release, reject, and renew in v2) within its share session,
// or closes the session with epoch -1 (broker/sharefetch).
//
// Authorization as ShareFetch: READ on the group for the whole request,
// READ on each topic for its partitions. A partition this broker does not
// lead answers NOT_LEADER_OR_FOLLOWER with its current leader (KIP-951).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

func newShareAcknowledgeHandler(sf ShareFetcher, md MetadataView) Handler {
	return Handler{
		Key: 79, MinVersion: 1, MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ShareAcknowledgeRequest)
			if body.GroupID == nil || !req.authorize(opRead, resGroup, *body.GroupID) {
				resp := body.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
				resp.SetVersion(body.Version)
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				if body.GroupID == nil {
					resp.ErrorCode = kerr.InvalidRequest.Code
				}
				return Reply(resp)
			}
			resp := sf.ShareAcknowledge(ctx, body, req.topicCheck(opRead))
			cl := newCurrentLeaders(md, listenerOf(req))
			for i := range resp.Topics {
				t := &resp.Topics[i]
				for j := range t.Partitions {
					p := &t.Partitions[j]
					if p.ErrorCode != kerr.NotLeaderForPartition.Code {
						continue
					}
					if name, ok := cl.topicName(t.TopicID); ok {
						p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = cl.leaderOf(kafka.TopicPartition{Topic: name, Partition: p.Partition})
					}
				}
			}
			for _, ep := range cl.nodeEndpoints() {
				e := kmsg.NewShareAcknowledgeResponseNodeEndpoint()
				e.NodeID, e.Host, e.Port, e.Rack = ep.NodeID, ep.Host, ep.Port, ep.Rack
				resp.NodeEndpoints = append(resp.NodeEndpoints, e)
			}
			return Reply(resp)
		},
	}
}
