package api

// Heartbeat (key 12), versions 0-4: the pinned Kafka release's range.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func newHeartbeatHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 12, MinVersion: 0, MaxVersion: 4,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.HeartbeatRequest)
			resp := kmsg.NewPtrHeartbeatResponse()
			resp.SetVersion(body.Version)
			if !req.authorize(opRead, resGroup, body.Group) {
				resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				return Reply(resp)
			}
			resp.ErrorCode = gd.Coordinator.Heartbeat(ctx, group.HeartbeatRequest{
				GroupID: body.Group, MemberID: body.MemberID, InstanceID: body.InstanceID, GenerationID: body.Generation,
			})
			return Reply(resp)
		},
	}
}
