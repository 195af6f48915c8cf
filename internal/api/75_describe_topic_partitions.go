package api

// DescribeTopicPartitions (key 75), version 0 (KIP-966): the pinned Kafka
// release's range. Kafka's Admin describeTopics uses it when a broker
// advertises it (kafka-topics --describe, --partition-size-limit-per-response).
//
// Behaviour as Kafka's DescribeTopicPartitionsRequestHandler and
// KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse: the topics
// asked for, or all (an empty list), from the cursor's topic on, sorted by
// name; at most min(ResponsePartitionLimit, max.request.partition.size.limit)
// partitions (at least 1; the request's default is 2000, the broker's too)
// from the cursor's partition of the cursor's topic and from 0 of the others;
// NextCursor names the first partition left out, or the next topic when the
// limit ends exactly at a topic's end. A cursor topic missing from the list
// asked for, or a negative cursor partition, is INVALID_REQUEST for every
// topic asked for. Topics the principal may not DESCRIBE are left out of an
// all-topics answer and answered TOPIC_AUTHORIZATION_FAILED, with a zero id,
// after the others when asked for by name. A missing topic asked for by name
// is UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an illegal
// name). Replicas and ISR are the image's, unfiltered; a leader without a
// registered broker with the request's listener is -1; the ELR and last-known-ELR
// are empty lists, as Kafka reports a partition without ELR (Sluice does
// not keep ELR). Authorized operations are always filled, as Kafka does.

import (
	"context"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/config"
	"github.com/sluice-io/sluice/internal/metadata"
)

func newDescribeTopicPartitionsHandler(cfg *config.Config, view MetadataView) Handler {
	return Handler{
		Key:        75,
		MinVersion: 0,
		MaxVersion: 0,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeTopicPartitionsRequest)
			limit := cfg.Int(config.MaxRequestPartitionSizeLimit)
			return Reply(describeTopicPartitions(view.Image(), req.Conn.Listener, body, limit, newDTPAuth(req)))
		},
	}
}

// dtpAuth is what DescribeTopicPartitions asks the authorizer.
type dtpAuth struct {
	describe func(topic string) bool
	ops      func(topic string) int32
}

func newDTPAuth(req *Request) dtpAuth {
	return dtpAuth{
		describe: req.topicCheck(opDescribe),
		ops:      func(topic string) int32 { return req.authorizedOperations(resTopic, topic, allTopicOperations) },
	}
}

func describeTopicPartitions(im *metadata.Image, listener string, req *kmsg.DescribeTopicPartitionsRequest, brokerLimit int32, az dtpAuth) *kmsg.DescribeTopicPartitionsResponse {
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	resp.SetVersion(req.Version)
	all := len(req.Topics) == 0
	cursorTopic := ""
	if req.Cursor != nil {
		cursorTopic = req.Cursor.Topic
	}
	names := dtpTopicNames(im, req, all, cursorTopic)
	if req.Cursor != nil && (req.Cursor.Partition < 0 || (!all && !slices.Contains(names, cursorTopic))) {
		return dtpFailed(req, kerr.InvalidRequest.Code)
	}
	var denied []kmsg.DescribeTopicPartitionsResponseTopic
	var allowed []string
	for _, name := range names {
		if az.describe(name) {
			allowed = append(allowed, name)
			continue
		}
		if !all {
			t := kmsg.NewDescribeTopicPartitionsResponseTopic()
			t.Topic, t.ErrorCode = &name, kerr.TopicAuthorizationFailed.Code
			t.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
			denied = append(denied, t)
		}
	}
	limit := max(min(brokerLimit, req.ResponsePartitionLimit), 1)
	dtpFill(im, listener, resp, allowed, req.Cursor, limit, all)
	for i := range resp.Topics {
		if resp.Topics[i].Topic != nil {
			resp.Topics[i].AuthorizedOperations = az.ops(*resp.Topics[i].Topic)
		}
	}
	resp.Topics = append(resp.Topics, denied...)
	return resp
}

// dtpTopicNames are the names at or after the cursor's topic, sorted and
// without duplicates.
func dtpTopicNames(im *metadata.Image, req *kmsg.DescribeTopicPartitionsRequest, all bool, cursorTopic string) []string {
	var names []string
	if all {
		names = im.TopicNames()
	} else {
		for _, t := range req.Topics {
			names = append(names, t.Topic)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n < cursorTopic })
	slices.Sort(names)
	return slices.Compact(names)
}

// dtpFill adds the topics' partitions from the cursor on, at most limit
// of them, and sets NextCursor where it stops.
func dtpFill(im *metadata.Image, listener string, resp *kmsg.DescribeTopicPartitionsResponse, names []string,
	cursor *kmsg.DescribeTopicPartitionsRequestCursor, limit int32, all bool) {
	remaining := limit
	for _, name := range names {
		if remaining == 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: 0}
			return
		}
		t, ok := im.Topic(name)
		if !ok {
			if !all {
				resp.Topics = append(resp.Topics, dtpMissing(name))
			}
			continue
		}
		start := int32(0)
		if cursor != nil && cursor.Topic == name {
			start = cursor.Partition
		}
		out, next := dtpTopic(im, t, listener, start, remaining)
		resp.Topics = append(resp.Topics, out)
		if next != -1 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: next}
			return
		}
		remaining -= int32(len(out.Partitions))
	}
}

// dtpTopic is a topic's partitions [start, start+count) and the next
// partition index, -1 when none is left.
func dtpTopic(im *metadata.Image, t *metadata.Topic, listener string, start, count int32) (kmsg.DescribeTopicPartitionsResponseTopic, int32) {
	out := kmsg.NewDescribeTopicPartitionsResponseTopic()
	name := t.Name
	out.Topic, out.TopicID, out.IsInternal = &name, t.ID, isInternalTopic(name)
	out.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
	n := int32(len(t.Partitions))
	upper := min(n, start+count)
	next := int32(-1)
	if upper < n {
		next = upper
	}
	for p := start; p < upper; p++ {
		st, ok := t.Partitions[p]
		if !ok {
			continue
		}
		out.Partitions = append(out.Partitions, dtpPartition(im, p, st, listener))
	}
	return out, next
}

func dtpPartition(im *metadata.Image, p int32, st metadata.PartitionState, listener string) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	rp.Partition, rp.LeaderID, rp.LeaderEpoch = p, st.Leader, st.LeaderEpoch
	// Kafka's getAliveEndpoint: a registered leader with the listener,
	// fenced or not.
	if b, ok := im.Broker(st.Leader); !ok {
		rp.LeaderID = metadata.NoLeader
	} else if _, ok := brokerEndpoint(b, listener); !ok {
		rp.LeaderID = metadata.NoLeader
	}
	rp.Replicas = slices.Clone(st.Replicas)
	rp.ISR = slices.Clone(st.ISR)
	rp.EligibleLeaderReplicas = []int32{}
	rp.LastKnownELR = []int32{}
	rp.OfflineReplicas = []int32{}
	for _, r := range st.Replicas {
		if !replicaLive(im, r, listener) {
			rp.OfflineReplicas = append(rp.OfflineReplicas, r)
		}
	}
	return rp
}

// dtpMissing answers a topic asked for by name that does not exist.
func dtpMissing(name string) kmsg.DescribeTopicPartitionsResponseTopic {
	t := kmsg.NewDescribeTopicPartitionsResponseTopic()
	t.Topic, t.IsInternal = &name, isInternalTopic(name)
	t.ErrorCode = kerr.UnknownTopicOrPartition.Code
	if !isValidTopicName(name) {
		t.ErrorCode = kerr.InvalidTopicException.Code
	}
	return t
}

// dtpFailed is Kafka's DescribeTopicPartitionsRequest.getErrorResponse:
// every topic asked for with the error and no partitions.
func dtpFailed(req *kmsg.DescribeTopicPartitionsRequest, code int16) *kmsg.DescribeTopicPartitionsResponse {
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	resp.SetVersion(req.Version)
	for _, rt := range req.Topics {
		t := kmsg.NewDescribeTopicPartitionsResponseTopic()
		name := rt.Topic
		t.Topic, t.ErrorCode = &name, code
		t.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		resp.Topics = append(resp.Topics, t)
	}
	return resp
}
