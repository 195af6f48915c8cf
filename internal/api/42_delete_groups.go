package api

// DeleteGroups (key 42), versions 0-3: the pinned Kafka release's range.
//
// Only empty groups are deleted (NON_EMPTY_GROUP otherwise), with their
// offsets, once the tombstones are durable.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func newDeleteGroupsHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 42, MinVersion: 0, MaxVersion: 3,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DeleteGroupsRequest)
			resp := kmsg.NewPtrDeleteGroupsResponse()
			resp.SetVersion(body.Version)
			for _, id := range body.Groups {
				rg := kmsg.NewDeleteGroupsResponseGroup()
				rg.Group = id
				if req.authorize(opDelete, resGroup, id) {
					rg.ErrorCode = gd.Coordinator.DeleteGroup(ctx, id)
				} else {
					rg.ErrorCode = kerr.GroupAuthorizationFailed.Code // Kafka: DELETE on the group
				}
				if rg.ErrorCode != 0 && body.Version >= 3 {
					msg := kerr.ErrorForCode(rg.ErrorCode).(*kerr.Error).Description
					rg.ErrorMessage = &msg
				}
				resp.Groups = append(resp.Groups, rg)
			}
			return Reply(resp)
		},
	}
}
