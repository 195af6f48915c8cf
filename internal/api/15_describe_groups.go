package api

// DescribeGroups (key 15), versions 0-6: the pinned Kafka release's range.
//
// Members carry their subscription and assignment only while the group is
// Stable, as in Kafka. A group that does not exist is described as Dead with
// no error before v6 and gets GROUP_ID_NOT_FOUND from v6 (KIP-1043).
// Authorization as Kafka's: DESCRIBE on each group, else
// GROUP_AUTHORIZATION_FAILED for it; authorized operations (v3+) when
// asked are those the principal may perform on the group (every one
// without an authorizer).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func newDescribeGroupsHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 15, MinVersion: 0, MaxVersion: 6,
		Handle: func(ctx context.Context, req *Request) Response {
			return Reply(describeGroups(ctx, gd.Coordinator, req.Body.(*kmsg.DescribeGroupsRequest), groupAuth{
				describe: func(g string) bool { return req.authorize(opDescribe, resGroup, g) },
				ops:      func(g string) int32 { return req.authorizedOperations(resGroup, g, allGroupOperations) },
			}))
		},
	}
}

// groupAuth is what DescribeGroups asks the authorizer.
type groupAuth struct {
	describe func(group string) bool
	ops      func(group string) int32
}

// allowAllGroups answers as without an authorizer.
var allowAllGroups = groupAuth{describe: allowAll, ops: func(string) int32 { return allGroupOperations }}

func describeGroups(ctx context.Context, gp GroupPlane, req *kmsg.DescribeGroupsRequest, az groupAuth) *kmsg.DescribeGroupsResponse {
	resp := kmsg.NewPtrDescribeGroupsResponse()
	resp.SetVersion(req.Version)
	for _, id := range req.Groups {
		rg := kmsg.NewDescribeGroupsResponseGroup()
		rg.Group = id
		rg.AuthorizedOperations = authorizedOperationsOmitted
		if !az.describe(id) {
			rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			if req.Version >= 6 {
				msg := kerr.GroupAuthorizationFailed.Description
				rg.ErrorMessage = &msg
			}
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		d := gp.DescribeGroup(ctx, id)
		if req.IncludeAuthorizedOperations {
			rg.AuthorizedOperations = az.ops(id)
		}
		rg.ErrorCode = d.ErrorCode
		if d.ErrorCode == kerr.GroupIDNotFound.Code && req.Version < 6 {
			rg.ErrorCode = 0
		}
		if rg.ErrorCode != 0 {
			if req.Version >= 6 {
				msg := kerr.ErrorForCode(rg.ErrorCode).(*kerr.Error).Description
				if rg.ErrorCode == kerr.GroupIDNotFound.Code {
					msg = "Group " + id + " not found." // Kafka's words
				}
				rg.ErrorMessage = &msg
			}
			if d.ErrorCode != kerr.GroupIDNotFound.Code {
				rg.State = ""
			} else {
				rg.State = group.Dead.String()
			}
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		rg.State = d.State.String()
		rg.ProtocolType = d.ProtocolType
		rg.Protocol = d.Protocol
		for _, m := range d.Members {
			rm := kmsg.NewDescribeGroupsResponseGroupMember()
			rm.MemberID, rm.InstanceID, rm.ClientID, rm.ClientHost = m.MemberID, m.InstanceID, m.ClientID, m.ClientHost
			rm.ProtocolMetadata, rm.MemberAssignment = nonNil(m.Metadata), nonNil(m.Assignment)
			rg.Members = append(rg.Members, rm)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
