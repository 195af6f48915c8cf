package api

// CreateAcls (key 30), versions 1-3: the pinned Kafka release's range.
//
// Behaviour as Kafka's (AclApis.handleCreateAcls, AclControlManager): each
// creation answers on its own: INVALID_REQUEST for a CLUSTER resource not
// named kafka-cluster, an empty name, ANY or MATCH patterns, ANY
// operations or permissions, a principal without a colon, an empty host or
// a malformed CIDR host (KIP-1276); a binding that exists already
// succeeds. A creation holding UNKNOWN (code 0) fails Kafka's request
// parsing, which closes the connection; so does it here. The bindings are
// written through the active controller (forwarded from a broker) and the
// answer waits until this node's image has them.
//
// Deviations: Kafka answers SECURITY_DISABLED when no authorizer is
// configured; Sluice stores ACLs whether or not one enforces them.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func newCreateACLsHandler(admin AdminController) Handler {
	return Handler{
		Key:        30,
		MinVersion: 1,
		MaxVersion: 3,
		Handle: func(ctx context.Context, req *Request) Response {
			body := req.Body.(*kmsg.CreateACLsRequest)
			for _, c := range body.Creations {
				if c.ResourceType == 0 || c.ResourcePatternType == 0 || c.Operation == 0 || c.PermissionType == 0 {
					return CloseConnection(errors.New("create acls: a creation holds UNKNOWN, which Kafka refuses to parse"))
				}
			}
			// Kafka asks ALTER on CLUSTER and answers
			// CLUSTER_AUTHORIZATION_FAILED for every creation.
			resp, err := (*kmsg.CreateACLsResponse)(nil), req.clusterRefusal(opAlter)
			if err == nil {
				resp, err = admin.CreateAcls(ctx, body)
			}
			if err != nil {
				resp = kmsg.NewPtrCreateACLsResponse()
				code, msg := ControllerErrorCode(err), errorMessage(err)
				for range body.Creations {
					r := kmsg.NewCreateACLsResponseResult()
					r.ErrorCode, r.ErrorMessage = code, msg
					resp.Results = append(resp.Results, r)
				}
			}
			resp.SetVersion(body.Version)
			return Reply(resp)
		},
	}
}
