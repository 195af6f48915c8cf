package api

// ListGroups (key 16), versions 0-5: the pinned Kafka release's range.
//
// v4 filters by state, v5 by group type (case-insensitive, as Kafka); every
// group here is "classic". COORDINATOR_LOAD_IN_PROGRESS is reported while a
// coordinator partition loads, with the groups of the loaded ones.

import (
	"context"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newListGroupsHandler(gd *GroupPlaneDeps) Handler {
	return Handler{
		Key: 16, MinVersion: 0, MaxVersion: 5,
		Handle: func(ctx context.Context, req *Request) Response {
			// Kafka lists every group to DESCRIBE on the cluster, else the
			// groups the principal may DESCRIBE.
			visible := allowAll
			if !req.authorizeCluster(opDescribe) {
				visible = func(g string) bool { return req.authorize(opDescribe, resGroup, g) }
			}
			return Reply(listGroups(ctx, gd.Coordinator, req.Body.(*kmsg.ListGroupsRequest), visible))
		},
	}
}

func listGroups(ctx context.Context, gp GroupPlane, req *kmsg.ListGroupsRequest, visible func(string) bool) *kmsg.ListGroupsResponse {
	resp := kmsg.NewPtrListGroupsResponse()
	resp.SetVersion(req.Version)
	groups, code := gp.ListGroups(ctx)
	resp.ErrorCode = code
	matches := func(filter []string, v string) bool {
		if len(filter) == 0 {
			return true
		}
		for _, f := range filter {
			if strings.EqualFold(f, v) {
				return true
			}
		}
		return false
	}
	for _, g := range groups {
		if !visible(g.GroupID) || !matches(req.StatesFilter, g.State) || !matches(req.TypesFilter, g.Type) {
			continue
		}
		rg := kmsg.NewListGroupsResponseGroup()
		rg.Group, rg.ProtocolType, rg.GroupState, rg.GroupType = g.GroupID, g.ProtocolType, g.State, g.Type
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}
