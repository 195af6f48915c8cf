package api

// DescribeProducers (key 61), version 0: the pinned release's range.
//
// Behaviour as Kafka's handleDescribeProducersRequest: each partition
// hosted here, as leader or follower, answers its active producers
// (producer id, epoch, last sequence, last timestamp, coordinator epoch and
// the first offset of the open transaction, -1 when none) from its producer
// state; kafka-transactions describe-producers and find-hanging read it. A
// topic name Kafka's rules refuse is INVALID_TOPIC_EXCEPTION and a topic the
// metadata does not know UNKNOWN_TOPIC_OR_PARTITION, both with Kafka's
// message; a partition this broker does not host NOT_LEADER_OR_FOLLOWER (or
// UNKNOWN_TOPIC_OR_PARTITION when it does not exist), a failed log
// KAFKA_STORAGE_ERROR, without a message.
//
// Authorization as Kafka's: READ on each topic, else
// TOPIC_AUTHORIZATION_FAILED (after the name's validity).
//
// Deviation: ThrottleMillis is 0 (no quotas).

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/kafka"
)

func newDescribeProducersHandler(dp DataPlane) Handler {
	return Handler{
		Key: 61, MinVersion: 0, MaxVersion: 0,
		Handle: func(_ context.Context, req *Request) Response {
			body, ok := req.Body.(*kmsg.DescribeProducersRequest)
			if !ok {
				return CloseConnection(fmt.Errorf("describe producers: unexpected body %T", req.Body))
			}
			return Reply(describeProducers(dp, body, req.topicCheck(opRead)))
		},
	}
}

// describeProducers answers req; readable is Kafka's READ on the topic
// (TOPIC_AUTHORIZATION_FAILED after the name's validity).
func describeProducers(dp DataPlane, req *kmsg.DescribeProducersRequest, readable func(string) bool) *kmsg.DescribeProducersResponse {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, rt := range req.Topics {
		st := kmsg.NewDescribeProducersResponseTopic()
		st.Topic = rt.Topic
		topicErr, topicMsg := describeProducersTopicError(dp, rt.Topic, readable)
		for _, id := range rt.Partitions {
			sp := kmsg.NewDescribeProducersResponseTopicPartition()
			sp.Partition = id
			if topicErr != nil {
				sp.ErrorCode, sp.ErrorMessage = topicErr.Code, kmsg.StringPtr(topicMsg)
			} else {
				fillActiveProducers(dp, &sp, kafka.TopicPartition{Topic: rt.Topic, Partition: id})
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// describeProducersTopicError is Kafka's topic check: a valid name the
// metadata knows, with the messages Kafka's ApiError carries.
func describeProducersTopicError(dp DataPlane, topic string, readable func(string) bool) (*kerr.Error, string) {
	if msg := topicNameProblem(topic); msg != "" {
		return kerr.InvalidTopicException, msg
	}
	if !readable(topic) {
		return kerr.TopicAuthorizationFailed, kerr.TopicAuthorizationFailed.Description
	}
	if _, ok := dp.TopicID(topic); !ok {
		return kerr.UnknownTopicOrPartition, kerr.UnknownTopicOrPartition.Description
	}
	return nil, ""
}

func fillActiveProducers(dp DataPlane, sp *kmsg.DescribeProducersResponseTopicPartition, tp kafka.TopicPartition) {
	producers, err := dp.ActiveProducers(tp)
	if err != nil {
		sp.ErrorCode = errorCode(err)
		return
	}
	for _, p := range producers {
		ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		ap.ProducerID, ap.ProducerEpoch, ap.LastSequence = p.ProducerID, int32(p.ProducerEpoch), p.LastSequence
		ap.LastTimestamp, ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = p.LastTimestamp, p.CoordinatorEpoch, p.CurrentTxnStartOffset
		sp.ActiveProducers = append(sp.ActiveProducers, ap)
	}
}

// topicNameProblem is Kafka's Topic.validate message for an illegal topic
// name, "" for a legal one.
func topicNameProblem(name string) string {
	switch {
	case name == "":
		return "Topic name is illegal, it can't be empty"
	case name == "." || name == "..":
		return `Topic name cannot be "." or ".."`
	case len(name) > 249:
		return fmt.Sprintf("Topic name is illegal, it can't be longer than 249 characters, topic name: %s", name)
	case !isValidTopicName(name):
		return `Topic name "` + name + `" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`
	}
	return ""
}
