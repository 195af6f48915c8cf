package api

// DescribeQuorum (key 55), versions 0-2: the pinned Kafka release's range.
// Served on broker and CONTROLLER listeners (KIP-919's
// --bootstrap-controller); a broker forwards it to the active controller,
// as Kafka's does, so kafka-metadata-quorum works through either. On a
// CONTROLLER listener only the leader answers; another voter answers
// NOT_LEADER_OR_FOLLOWER at the partition (notQuorumLeader), as Kafka's
// raft client does, and the admin client retries at the active controller.
//
// Behaviour as Kafka's: only __cluster_metadata-0 is described (another
// partition is UNKNOWN_TOPIC_OR_PARTITION); the leader, its epoch, the high
// watermark, the voters and the observers (registered brokers that are not
// voters) with their log end offsets, and (v2) the voters' CONTROLLER
// endpoints.
//
// Deviations: a voter's log end offset is the raft leader's record of what
// it acknowledged (Kafka's: the offset of its last fetch); its last fetch
// time is the time of the answer when the leader heard from it within the
// election timeout, -1 otherwise (etcd raft keeps no timestamps), and it is
// caught up at that time when its end offset reaches the high watermark.
// An observer's offset and times come from its broker heartbeats (the
// metadata offset it reported and when). On a static quorum directory ids
// are zero; a dynamic one (KIP-853) reports each voter's directory id and
// every listener it registered, and a voter being added (a Raft learner
// catching up) as an observer with its directory id.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataTopic is the metadata log's topic.
const metadataTopic = "__cluster_metadata"

// newDescribeQuorumHandler serves DescribeQuorum on broker listeners: the
// active controller describes the quorum, reached locally or forwarded.
func newDescribeQuorumHandler(admin AdminController) Handler {
	return Handler{Key: 55, MinVersion: 0, MaxVersion: 2, Handle: describeQuorum(admin.DescribeQuorum)}
}

// newControllerDescribeQuorumHandler serves DescribeQuorum on CONTROLLER
// listeners: this voter describes the quorum when it leads it; otherwise
// (its DescribeQuorum fails with ErrNotController) it answers
// NOT_LEADER_OR_FOLLOWER with the leader it knows.
func newControllerDescribeQuorumHandler(q QuorumControl) Handler {
	describe := func(ctx context.Context, req *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error) {
		resp, err := q.DescribeQuorum(ctx, req)
		if errors.Is(err, ErrNotController) {
			return notQuorumLeader(req, q.Leader()), nil
		}
		return resp, err
	}
	return Handler{Key: 55, MinVersion: 0, MaxVersion: 2, Handle: describeQuorum(describe)}
}

// describeQuorum answers only __cluster_metadata-0, through describe.
func describeQuorum(describe func(context.Context, *kmsg.DescribeQuorumRequest) (*kmsg.DescribeQuorumResponse, error)) func(context.Context, *Request) Response {
	return func(ctx context.Context, req *Request) Response {
		body := req.Body.(*kmsg.DescribeQuorumRequest)
		if err := req.clusterRefusal(opDescribe); err != nil { // Kafka's controller: DESCRIBE on the cluster
			resp := kmsg.NewPtrDescribeQuorumResponse()
			resp.SetVersion(body.Version)
			resp.ErrorCode, resp.ErrorMessage = ControllerErrorCode(err), errorMessage(err)
			return Reply(resp)
		}
		if !describesMetadataPartition(body) {
			return Reply(unknownQuorumPartition(body))
		}
		resp, err := describe(ctx, body)
		if err != nil {
			resp = kmsg.NewPtrDescribeQuorumResponse()
			resp.ErrorCode = ControllerErrorCode(err)
			resp.ErrorMessage = errorMessage(err)
		}
		resp.SetVersion(body.Version)
		return Reply(resp)
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

// notQuorumLeader is a non-leader voter's answer: NOT_LEADER_OR_FOLLOWER on
// __cluster_metadata-0, with the leader it knows (-1: none).
func notQuorumLeader(req *kmsg.DescribeQuorumRequest, leader int32) *kmsg.DescribeQuorumResponse {
	resp := kmsg.NewPtrDescribeQuorumResponse()
	resp.SetVersion(req.Version)
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = metadataTopic
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	rp.ErrorCode = kerr.NotLeaderForPartition.Code
	rp.ErrorMessage = stringPtr("this controller is not the quorum leader")
	rp.LeaderID = leader
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	return resp
}
