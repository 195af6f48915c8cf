package api

// ShareFetch (key 78), versions 1-2: the pinned Kafka release's range
// (KIP-932). A share consumer's fetch: it opens, continues or closes its
// share session, carries acknowledgements of records fetched earlier, and
// acquires records of the session's partitions for the member, locked for
// the group's record lock duration (the broker's share-partition manager,
// broker/sharefetch).
//
// Authorization as Kafka's: READ on the group, else the whole request
// fails with GROUP_AUTHORIZATION_FAILED; READ on each topic, else its
// partitions answer TOPIC_AUTHORIZATION_FAILED. A partition this broker
// does not lead answers NOT_LEADER_OR_FOLLOWER with its current leader and
// the leader's endpoint (KIP-951).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

// ShareFetcher is the broker's share-partition manager;
// *sharefetch.Manager implements it.
type ShareFetcher interface {
	ShareFetch(ctx context.Context, req *kmsg.ShareFetchRequest, conn string, topicAllowed func(string) bool) *kmsg.ShareFetchResponse
	ShareAcknowledge(ctx context.Context, req *kmsg.ShareAcknowledgeRequest, topicAllowed func(string) bool) *kmsg.ShareAcknowledgeResponse
}

func newShareFetchHandler(sf ShareFetcher, md MetadataView) Handler {
	return Handler{
		Key: 78, MinVersion: 1, MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ShareFetchRequest)
			if body.GroupID == nil || !req.authorize(opRead, resGroup, *body.GroupID) {
				resp := body.ResponseKind().(*kmsg.ShareFetchResponse)
				resp.SetVersion(body.Version)
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				if body.GroupID == nil {
					resp.ErrorCode = kerr.InvalidRequest.Code
				}
				return Reply(resp)
			}
			resp := sf.ShareFetch(ctx, body, ConnKey(req.Conn), req.topicCheck(opRead))
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
				e := kmsg.NewShareFetchResponseNodeEndpoint()
				e.NodeID, e.Host, e.Port, e.Rack = ep.NodeID, ep.Host, ep.Port, ep.Rack
				resp.NodeEndpoints = append(resp.NodeEndpoints, e)
			}
			return Reply(resp)
		},
	}
}

// ConnKey names a connection for the share sessions opened on it ("" for
// none: a test's request without a connection).
func ConnKey(c *ConnState) string {
	if c == nil || c.RemoteAddr == nil || c.LocalAddr == nil {
		return ""
	}
	return c.Listener + " " + c.RemoteAddr.String() + " " + c.LocalAddr.String()
}

// listenerOf is the listener the request came in on.
func listenerOf(req *Request) string {
	if req.Conn == nil {
		return ""
	}
	return req.Conn.Listener
}
