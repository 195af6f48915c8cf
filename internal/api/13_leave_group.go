package api

// LeaveGroup (key 13), versions 0-5: the pinned Kafka release's range.
//
// v3+ removes several members at once, by member id or by group instance
// id (KIP-345), each with its own error; before v3 the one member's error is
// the response's. Leaving a group that does not exist gives each member
// UNKNOWN_MEMBER_ID, as in Kafka.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func newLeaveGroupHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 13, MinVersion: 0, MaxVersion: 5,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.LeaveGroupRequest)
			if !req.authorize(opRead, resGroup, body.Group) {
				resp := kmsg.NewPtrLeaveGroupResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				return Reply(resp)
			}
			return Reply(leaveGroup(ctx, gd.Coordinator, body))
		},
	}
}

func leaveGroup(ctx context.Context, gp GroupPlane, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := kmsg.NewPtrLeaveGroupResponse()
	resp.SetVersion(req.Version)
	if req.Version < 3 {
		res := gp.LeaveGroup(ctx, req.Group, []group.LeaveMember{{MemberID: req.MemberID}})
		resp.ErrorCode = res.ErrorCode
		if res.ErrorCode == 0 && len(res.Members) == 1 {
			resp.ErrorCode = res.Members[0]
		}
		return resp
	}
	members := make([]group.LeaveMember, len(req.Members))
	for i, m := range req.Members {
		members[i] = group.LeaveMember{MemberID: m.MemberID, InstanceID: m.InstanceID}
	}
	res := gp.LeaveGroup(ctx, req.Group, members)
	resp.ErrorCode = res.ErrorCode
	if res.ErrorCode != 0 {
		return resp
	}
	for i, m := range req.Members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ErrorCode = m.MemberID, m.InstanceID, res.Members[i]
		resp.Members = append(resp.Members, rm)
	}
	return resp
}
