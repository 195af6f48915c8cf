package api

// SyncGroup (key 14), versions 0-5: the pinned Kafka release's range.
//
// The leader's assignment is answered only once the group record holding
// it is durable; followers wait for it. v5 checks the protocol type and
// name against the group's (INCONSISTENT_GROUP_PROTOCOL).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func newSyncGroupHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 14, MinVersion: 0, MaxVersion: 5,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.SyncGroupRequest)
			if !req.authorize(opRead, resGroup, body.Group) {
				resp := kmsg.NewPtrSyncGroupResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode, resp.MemberAssignment = kerr.GroupAuthorizationFailed.Code, []byte{}
				return Reply(resp)
			}
			return Reply(syncGroup(ctx, gd.Coordinator, body))
		},
	}
}

func syncGroup(ctx context.Context, gp GroupPlane, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	sr := group.SyncRequest{
		GroupID: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID, GenerationID: req.Generation,
		ProtocolType: req.ProtocolType, ProtocolName: req.Protocol,
	}
	if len(req.GroupAssignment) > 0 {
		sr.Assignments = make(map[string][]byte, len(req.GroupAssignment))
		for _, a := range req.GroupAssignment {
			sr.Assignments[a.MemberID] = a.MemberAssignment
		}
	}
	res := gp.SyncGroup(ctx, sr)
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.SetVersion(req.Version)
	resp.ErrorCode = res.ErrorCode
	resp.MemberAssignment = res.Assignment
	if resp.MemberAssignment == nil {
		resp.MemberAssignment = []byte{}
	}
	if req.Version >= 5 && res.ErrorCode == 0 {
		resp.ProtocolType, resp.Protocol = res.ProtocolType, res.ProtocolName
	}
	return resp
}
