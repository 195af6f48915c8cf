package api

// DeleteAcls (key 31), versions 1-3: the pinned Kafka release's range.
//
// Behaviour as Kafka's (AclApis.handleDeleteAcls, AclControlManager): each
// filter (ANY codes and null strings match all, MATCH the bindings that
// apply to a resource) answers with the bindings it removed; a binding
// several filters match is removed once and listed by each; a filter with
// a code Kafka does not define is INVALID_REQUEST; more than 10000
// removals in one request fail the filter that passes the bound. A filter
// holding UNKNOWN (code 0) fails Kafka's request parsing, which closes the
// connection; so does it here. The removals go through the active
// controller and the answer waits until this node's image has them.
//
// Deviations: Kafka answers SECURITY_DISABLED when no authorizer is
// configured; Sluice stores ACLs whether or not one enforces them. Each
// filter's matches come sorted (Kafka's follow hash order).

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newDeleteACLsHandler(admin AdminController) Handler {
	return Handler{
		Key:        31,
		MinVersion: 1,
		MaxVersion: 3,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DeleteACLsRequest)
			for _, f := range body.Filters {
				if f.ResourceType == 0 || f.ResourcePatternType == 0 || f.Operation == 0 || f.PermissionType == 0 {
					return CloseConnection(errors.New("delete acls: a filter holds UNKNOWN, which Kafka refuses to parse"))
				}
			}
			// Kafka asks ALTER on CLUSTER and answers
			// CLUSTER_AUTHORIZATION_FAILED for every filter.
			resp, err := (*kmsg.DeleteACLsResponse)(nil), req.clusterRefusal(opAlter)
			if err == nil {
				resp, err = admin.DeleteAcls(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrDeleteACLsResponse()
				code, msg := ControllerErrorCode(err), errorMessage(err)
				for range body.Filters {
					r := kmsg.NewDeleteACLsResponseResult()
					r.ErrorCode, r.ErrorMessage = code, msg
					resp.Results = append(resp.Results, r)
				}
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
