package api

// OffsetForLeaderEpoch (key 23), versions 2-4: the pinned release's range
// (KIP-896 floor).
//
// Behaviour as Kafka's: for each partition, the largest leader epoch at or
// below the requested one in the leader's log and the offset where it ends
// (the log end offset for the current epoch); an unknown or future epoch
// answers -1/-1 without error. Only the leader answers, with the current
// leader epoch checks of KIP-320 (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH);
// unknown partitions get UNKNOWN_TOPIC_OR_PARTITION; errors answer -1/-1.
// Consumers send replica id -1 (v3+); followers use it in the replication
// issue.
//
// Authorization as Kafka's: CLUSTER_ACTION on the cluster or DESCRIBE on
// each topic, else TOPIC_AUTHORIZATION_FAILED.
//
// Deviations: ThrottleMillis is 0.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

func newOffsetForLeaderEpochHandler(dp DataPlane) Handler {
	return Handler{
		Key:        23,
		MinVersion: 2,
		MaxVersion: 4,
		Handle: func(_ context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.OffsetForLeaderEpochRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("offset for leader epoch: unexpected body %T", req.Body))
			}
			resp := body.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
			// Kafka: CLUSTER_ACTION on the cluster, else DESCRIBE on each
			// topic (KIP-320's consumers).
			describable := allowAll
			if !req.authorizeCluster(opClusterAction) {
				describable = req.topicCheck(opDescribe)
			}
			for _, rt := range body.Topics {
				st := kmsg.NewOffsetForLeaderEpochResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
					sp.Partition = rp.Partition
					if !describable(rt.Topic) {
						sp.ErrorCode, sp.LeaderEpoch, sp.EndOffset = kerr.TopicAuthorizationFailed.Code, -1, -1
						st.Partitions = append(st.Partitions, sp)
						continue
					}
					ans, err := dp.EndOffsetForEpoch(kafka.TopicPartition{Topic: rt.Topic, Partition: rp.Partition},
						rp.CurrentLeaderEpoch, rp.LeaderEpoch, true)
					sp.ErrorCode = errorCode(err)
					sp.LeaderEpoch, sp.EndOffset = ans.Epoch, ans.EndOffset
					if err != nil {
						sp.LeaderEpoch, sp.EndOffset = -1, -1
					}
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
			return Reply(resp)
		},
	}
}
