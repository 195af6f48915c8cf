package api

// DeleteRecords (key 21), versions 0-2: the pinned release's range.
//
// Behaviour as Kafka's: offset -1 means the high watermark; an offset beyond
// the high watermark (or negative) is OFFSET_OUT_OF_RANGE; a topic whose
// cleanup.policy lacks delete refuses with POLICY_VIOLATION; the answer is
// the new low watermark (log start offset), -1 with an error; unknown
// partitions get UNKNOWN_TOPIC_OR_PARTITION.
//
// Authorization: DELETE on each topic, else TOPIC_AUTHORIZATION_FAILED.
//
// Deviations: the answer is the leader's new log start offset, given at
// once; Kafka waits (up to timeout_ms) until the live followers' log start
// offsets have reached it and answers their minimum. Followers here learn
// the new log start from their next fetch and delete behind it then.
// ThrottleMillis is 0.

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

func newDeleteRecordsHandler(dp DataPlane) Handler {
	return Handler{
		Key:        21,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(_ context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.DeleteRecordsRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("delete records: unexpected body %T", req.Body))
			}
			resp := body.ResponseKind().(*kmsg.DeleteRecordsResponse)
			deletable := req.topicCheck(opDelete) // Kafka: DELETE on the topic
			for _, rt := range body.Topics {
				st := kmsg.NewDeleteRecordsResponseTopic()
				st.Topic = rt.Topic
				for _, rp := range rt.Partitions {
					sp := kmsg.NewDeleteRecordsResponseTopicPartition()
					sp.Partition = rp.Partition
					if !deletable(rt.Topic) {
						sp.ErrorCode, sp.LowWatermark = kerr.TopicAuthorizationFailed.Code, -1
						st.Partitions = append(st.Partitions, sp)
						continue
					}
					low, err := dp.DeleteRecords(kafka.TopicPartition{Topic: rt.Topic, Partition: rp.Partition}, rp.Offset)
					sp.ErrorCode = errorCode(err)
					sp.LowWatermark = low
					if err != nil {
						sp.LowWatermark = -1
					}
					st.Partitions = append(st.Partitions, sp)
				}
				resp.Topics = append(resp.Topics, st)
			}
			return Reply(resp)
		},
	}
}
