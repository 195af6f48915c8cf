package api

// DescribeQuorum (key 55), versions 0-2: the pinned Kafka release's range.
// Served on broker and CONTROLLER listeners (KIP-919's
// --bootstrap-controller); a broker forwards it to the active controller,
// as Kafka's does, so kafka-metadata-quorum works through either.
//
// Behaviour as Kafka's: only __cluster_metadata-0 is described (another
// partition is UNKNOWN_TOPIC_OR_PARTITION); the leader, its epoch, the high
// watermark, the voters and the observers (registered brokers that are not
// voters) with their log end offsets, and (v2) the voters' CONTROLLER
// endpoints.
//
// Deviations: a voter's or observer's log end offset and fetch timestamps
// come from its broker heartbeats (the metadata offset it reported and when),
// not from raft fetches, so a voter that is not also a broker shows -1;
// directory ids are zero (no KIP-853 dynamic quorum).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopic is the metadata log's topic.
const metadataTopic = "__cluster_metadata"

// QuorumDescriber answers DescribeQuorum for __cluster_metadata-0 (the node:
// the active controller describes, others forward).
type QuorumDescriber interface {
	DescribeQuorum(ctx context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error)
}

// DescribeQuorumHandler serves DescribeQuorum through q; the node passes it
// to NewRegistry with its broker and controller registries.
func DescribeQuorumHandler(q QuorumDescriber) Handler {
	return Handler{
		Key:        55,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeQuorumRequest)
			if !describesMetadataPartition(body) {
				return Reply(unknownQuorumPartition(body))
			}
			resp, err := q.DescribeQuorum(ctx, body)
			if err != nil {
				resp = kmsg.NewPtrDescribeQuorumResponse()
				resp.ErrorCode = ControlPlaneErrorCode(err)
				resp.ErrorMessage = errorMessage(err)
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// describesMetadataPartition reports whether the request asks for exactly
// __cluster_metadata-0, the only partition Kafka describes.
func describesMetadataPartition(req *kmsg.DescribeQuorumRequest) bool {
	return len(req.Topics) == 1 && req.Topics[0].Topic == metadataTopic &&
		len(req.Topics[0].Partitions) == 1 && req.Topics[0].Partitions[0].Partition == 0
}

func unknownQuorumPartition(req *kmsg.DescribeQuorumRequest) *kmsg.DescribeQuorumResponse {
	resp := kmsg.NewPtrDescribeQuorumResponse()
	resp.SetVersion(req.Version)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeQuorumResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeQuorumResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			rp.LeaderID = -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
