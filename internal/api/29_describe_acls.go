package api

// DescribeAcls (key 29), versions 1-3: the pinned Kafka release's range.
//
// Behaviour as Kafka's (AclApis.handleDescribeAcls over the authorizer's
// view of the image): the bindings that pass the filter (ANY codes and
// null strings match all; pattern type MATCH finds the bindings that apply
// to the named resource: its literal name, the literal wildcard and the
// prefixes of the name), grouped by resource pattern. A filter holding
// UNKNOWN (code 0) fails Kafka's request parsing, which closes the
// connection; so does it here. Served from this node's published image.
//
// Deviations: Kafka answers SECURITY_DISABLED when no authorizer is
// configured; Sluice stores ACLs whether or not one enforces them, so it
// answers. Groups and bindings come sorted (Kafka's follow hash order).

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

func newDescribeACLsHandler(view MetadataView) Handler {
	return Handler{
		Key:        29,
		MinVersion: 1,
		MaxVersion: 3,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeACLsRequest)
			if body.ResourceType == 0 || body.ResourcePatternType == 0 || body.Operation == 0 || body.PermissionType == 0 {
				return CloseConnection(errors.New("describe acls: the filter holds UNKNOWN, which Kafka refuses to parse"))
			}
			// Kafka asks DESCRIBE on CLUSTER and answers
			// CLUSTER_AUTHORIZATION_FAILED without it.
			if !req.authorizeCluster(opDescribe) {
				resp := kmsg.NewPtrDescribeACLsResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, codeMessage(kerr.ClusterAuthorizationFailed.Code)
				return Reply(resp)
			}
			return Reply(describeACLs(view.Image(), body))
		},
	}
}

func describeACLs(im *metadata.Image, req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	resp := kmsg.NewPtrDescribeACLsResponse()
	resp.SetVersion(req.Version)
	f := metadata.ACLFilter{
		ResourceType: metadata.ACLResourceType(req.ResourceType), Name: req.ResourceName,
		PatternType: metadata.ACLPatternType(req.ResourcePatternType), Principal: req.Principal, Host: req.Host,
		Operation: metadata.ACLOperation(req.Operation), Permission: metadata.ACLPermission(req.PermissionType),
	}
	for _, b := range im.ACLs(f) {
		n := len(resp.Resources)
		if n == 0 || resp.Resources[n-1].ResourceName != b.Resource.Name ||
			resp.Resources[n-1].ResourceType != kmsg.ACLResourceType(b.Resource.Type) ||
			resp.Resources[n-1].ResourcePatternType != kmsg.ACLResourcePatternType(b.Resource.PatternType) {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName = kmsg.ACLResourceType(b.Resource.Type), b.Resource.Name
			r.ResourcePatternType = kmsg.ACLResourcePatternType(b.Resource.PatternType)
			resp.Resources = append(resp.Resources, r)
			n++
		}
		acl := kmsg.NewDescribeACLsResponseResourceACL()
		acl.Principal, acl.Host = b.Entry.Principal, b.Entry.Host
		acl.Operation, acl.PermissionType = kmsg.ACLOperation(b.Entry.Operation), kmsg.ACLPermissionType(b.Entry.Permission)
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, acl)
	}
	return resp
}
