package api

// JoinGroup (key 11), versions 0-9: the pinned Kafka release's range (Kafka
// 4.1 serves v0-1 again after KIP-896 removed them and clients broke).
//
// v0 has no rebalance timeout: the session timeout stands in, as in Kafka.
// From v4 a new dynamic member first gets MEMBER_ID_REQUIRED (KIP-394).
// The request blocks its connection until the rebalance completes.

import (
	"context"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/coordinator/group"
)

func newJoinGroupHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 11, MinVersion: 0, MaxVersion: 9,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.JoinGroupRequest)
			if !req.authorize(opRead, resGroup, body.Group) {
				// Kafka's JoinGroupRequest.getErrorResponse.
				resp := kmsg.NewPtrJoinGroupResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode, resp.Generation = kerr.GroupAuthorizationFailed.Code, -1
				if body.Version < 7 {
					resp.Protocol = new(string)
				}
				return Reply(resp)
			}
			return Reply(joinGroup(ctx, gd.Coordinator, req, body))
		},
	}
}

func joinGroup(ctx context.Context, gp GroupPlane, r *Request, req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	rebalance := req.RebalanceTimeoutMillis
	if req.Version == 0 {
		rebalance = req.SessionTimeoutMillis
	}
	jr := group.JoinRequest{
		GroupID: req.Group, MemberID: req.MemberID, InstanceID: req.InstanceID,
		ClientID: r.Header.ClientIDString(), ClientHost: clientHost(r),
		SessionTimeout:       time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		RebalanceTimeout:     time.Duration(rebalance) * time.Millisecond,
		ProtocolType:         req.ProtocolType,
		RequireKnownMemberID: req.Version >= 4,
	}
	for _, p := range req.Protocols {
		jr.Protocols = append(jr.Protocols, group.Protocol{Name: p.Name, Metadata: p.Metadata})
	}
	res := gp.JoinGroup(ctx, jr)
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.SetVersion(req.Version)
	resp.ErrorCode = res.ErrorCode
	resp.Generation = res.GenerationID
	resp.MemberID = res.MemberID
	resp.LeaderID = res.LeaderID
	if req.Version >= 7 {
		resp.ProtocolType = res.ProtocolType
		resp.Protocol = res.ProtocolName
	} else if res.ProtocolName != nil {
		resp.Protocol = res.ProtocolName
	} else {
		// Before v7 the protocol name is not nullable.
		empty := ""
		resp.Protocol = &empty
	}
	resp.SkipAssignment = res.SkipAssignment && req.Version >= 9
	for _, m := range res.Members {
		rm := kmsg.NewJoinGroupResponseMember()
		rm.MemberID, rm.InstanceID, rm.ProtocolMetadata = m.MemberID, m.InstanceID, m.Metadata
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

// clientHost is the client's address as Kafka shows it ("/127.0.0.1").
func clientHost(r *Request) string {
	if r.Conn == nil || r.Conn.RemoteAddr == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(r.Conn.RemoteAddr.String())
	if err != nil {
		host = r.Conn.RemoteAddr.String()
	}
	return "/" + host
}
