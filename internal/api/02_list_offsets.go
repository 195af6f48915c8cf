package api

// ListOffsets (key 2), versions 1-11: the pinned release's range (KIP-896
// floor, no v0 old-style offset lists).
//
// Behaviour as Kafka's: earliest (-2) and earliest-local (-4, the same
// without tiered storage) answer the log start offset with the epoch that
// wrote it; latest (-1) the high watermark (read_uncommitted) or last stable
// offset (read_committed) with the current leader epoch; max timestamp (-3,
// KIP-734) the record with the largest timestamp; a timestamp the earliest
// offset whose timestamp is at or above it, or -1 when none below the
// isolation's bound; latest-tiered (-5) and earliest-pending-upload (-6)
// answer -1 as Kafka does without remote storage. Only the leader answers
// (replica id -2, Kafka's debugging id, included), with current leader epoch
// checks; a partition named twice gets INVALID_REQUEST; errors answer offset,
// timestamp and epoch -1.
//
// Deviations: timeout_ms (v10+) is unused: there is no remote storage to
// wait for. ThrottleMillis is 0.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
	"github.com/sluice-io/sluice/internal/replication"
)

// consumerReplicaID is the replica id of client requests.
const consumerReplicaID int32 = -1

func newListOffsetsHandler(dp DataPlane) Handler {
	return Handler{
		Key:        2,
		MinVersion: 1,
		MaxVersion: 11,
		Handle: func(_ context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.ListOffsetsRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("list offsets: unexpected body %T", req.Body))
			}
			return Reply(handleListOffsets(dp, body, req.topicCheck(opDescribe)))
		},
	}
}

// describable is Kafka's check, DESCRIBE on the topic: TOPIC_AUTHORIZATION_FAILED
// before anything else.
func handleListOffsets(dp DataPlane, req *kmsg.ListOffsetsRequest, describable func(string) bool) *kmsg.ListOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	seen := make(map[kafka.TopicPartition]int)
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			seen[kafka.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}]++
		}
	}
	isClient := req.ReplicaID == consumerReplicaID
	iso := replication.IsolationForLevel(req.IsolationLevel)
	if !isClient {
		iso = replication.IsolationLogEnd
	}
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.Timestamp, sp.Offset, sp.LeaderEpoch = -1, -1, -1
			tp := kafka.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}
			switch {
			case !describable(rt.Topic):
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case seen[tp] > 1:
				sp.ErrorCode = kerr.InvalidRequest.Code
			default:
				ans, err := dp.ListOffset(tp, rp.Timestamp, iso, rp.CurrentLeaderEpoch, isClient)
				sp.ErrorCode = errorCode(err)
				if err == nil {
					sp.Timestamp, sp.Offset, sp.LeaderEpoch = ans.Timestamp, ans.Offset, ans.LeaderEpoch
				}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}
