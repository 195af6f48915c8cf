package api

// ElectLeaders (key 43), versions 0-2: the pinned Kafka release's range.
//
// Behaviour as Kafka's: preferred (0) and unclean (1, v1+) elections for
// the listed partitions or, with null topics, every partition; per-partition
// errors ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE and UNKNOWN_TOPIC_OR_PARTITION; a broker
// forwards the request to the active controller.
//
// Authorization: ALTER on the cluster, as Kafka's controller.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// newElectLeadersHandler serves ElectLeaders through the active controller,
// on broker and CONTROLLER listeners alike.
func newElectLeadersHandler(admin AdminController) Handler {
	return Handler{
		Key:        43,
		MinVersion: 0,
		MaxVersion: 2,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.ElectLeadersRequest)
			resp, err := (*kmsg.ElectLeadersResponse)(nil), req.clusterRefusal(opAlter)
			if err == nil {
				resp, err = admin.ElectLeaders(ctx, body)
			}
			if err != nil {
				resp = electLeadersFailed(body, ControllerErrorCode(err))
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}

// electLeadersFailed answers every listed partition with code (v0 has no
// top-level error code).
func electLeadersFailed(req *kmsg.ElectLeadersRequest, code int16) *kmsg.ElectLeadersResponse {
	resp := kmsg.NewPtrElectLeadersResponse()
	resp.SetVersion(req.Version)
	resp.ErrorCode = code
	for _, t := range req.Topics {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
