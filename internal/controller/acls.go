package controller

// CreateAcls and DeleteAcls as Kafka's AclApis and AclControlManager:
// each binding or filter is validated on its own and answered with its own
// code; a binding that exists already (or twice in one request) succeeds
// without a record; a filter's matches are removed once however many
// filters match them.

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

// cidrMetadataVersion is the first metadata.version whose ACL hosts may be
// CIDR ranges (Kafka's 4.4-IV1, KIP-1276).
const cidrMetadataVersion = 32

// CreationBinding is the binding a CreateAcls creation asks for, with
// Kafka's codes as they came (a code Kafka does not define reads as
// UNKNOWN).
func CreationBinding(c kmsg.CreateACLsRequestCreation) metadata.ACLBinding {
	return metadata.ACLBinding{
		Resource: metadata.ACLResource{Type: metadata.ACLResourceType(c.ResourceType), Name: c.ResourceName,
			PatternType: metadata.ACLPatternType(c.ResourcePatternType)},
		Entry: metadata.ACLEntry{Principal: c.Principal, Host: c.Host, Operation: metadata.ACLOperation(c.Operation),
			Permission: metadata.ACLPermission(c.PermissionType)},
	}
}

// CreateAcls computes the records and response of a CreateAcls request.
func (c *Controller) CreateAcls(im *metadata.Image, req *kmsg.CreateACLsRequest) ([]metadata.Record, *kmsg.CreateACLsResponse) {
	resp := kmsg.NewPtrCreateACLsResponse()
	resp.Version = req.Version
	cidr := im.FeatureLevel(metadata.MetadataVersionFeature) >= cidrMetadataVersion
	seen := map[metadata.ACLBinding]bool{}
	var records []metadata.Record
	for _, creation := range req.Creations {
		b := CreationBinding(creation)
		r := kmsg.NewCreateACLsResponseResult()
		if err, msg := validateNewACL(b, cidr); err != nil {
			r.ErrorCode, r.ErrorMessage = errMessage(err, msg)
		} else if !seen[b] && !im.HasACL(b) {
			seen[b] = true
			records = append(records, &metadata.AccessControlEntryRecord{Binding: b})
		}
		resp.Results = append(resp.Results, r)
	}
	if len(records) > MaxRecordsPerOperation {
		// Kafka's bounded record list fails the whole operation.
		for i := range resp.Results {
			resp.Results[i].ErrorCode, resp.Results[i].ErrorMessage = errMessage(kerr.UnknownServerError, "")
		}
		return nil, resp
	}
	return records, resp
}

// validateNewACL checks a binding as Kafka's AclApis.handleCreateAcls and
// AclControlManager.validateNewAcl do, in their order; every refusal is
// INVALID_REQUEST but a CIDR host before its metadata.version.
func validateNewACL(b metadata.ACLBinding, cidr bool) (*kerr.Error, string) {
	r, e := b.Resource, b.Entry
	switch {
	case r.Type == metadata.ACLResourceCluster && r.Name != metadata.ACLClusterName:
		return kerr.InvalidRequest, "The only valid name for the CLUSTER resource is " + metadata.ACLClusterName
	case r.Name == "":
		return kerr.InvalidRequest, "Invalid empty resource name"
	case !r.Type.Concrete():
		return kerr.InvalidRequest, "Invalid resourceType " + r.Type.String()
	case !r.PatternType.Concrete():
		return kerr.InvalidRequest, "Invalid patternType " + r.PatternType.String()
	case !e.Operation.Concrete():
		return kerr.InvalidRequest, "Invalid operation " + e.Operation.String()
	case !e.Permission.Concrete():
		return kerr.InvalidRequest, "Invalid permissionType " + e.Permission.String()
	case !strings.Contains(e.Principal, ":"):
		return kerr.InvalidRequest, fmt.Sprintf("Could not parse principal from `%s` (no colon is present separating the principal type from the principal name)", e.Principal)
	}
	return validateHostPattern(e.Host, cidr)
}

// validateHostPattern is Kafka's AclControlManager.validateHostPattern.
func validateHostPattern(host string, cidr bool) (*kerr.Error, string) {
	switch {
	case host == "":
		return kerr.InvalidRequest, "Host pattern cannot be null or empty"
	case host == metadata.ACLWildcard || !strings.Contains(host, "/"):
		return nil, ""
	case !cidr:
		return kerr.UnsupportedVersion, "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher."
	}
	if err := validateCIDR(host); err != nil {
		return kerr.InvalidRequest, fmt.Sprintf("Invalid CIDR notation '%s': %s", host, err)
	}
	return nil, ""
}

// DeleteFilter is the filter a DeleteAcls filter asks for.
func DeleteFilter(f kmsg.DeleteACLsRequestFilter) metadata.ACLFilter {
	return metadata.ACLFilter{
		ResourceType: metadata.ACLResourceType(f.ResourceType), Name: f.ResourceName,
		PatternType: metadata.ACLPatternType(f.ResourcePatternType), Principal: f.Principal, Host: f.Host,
		Operation: metadata.ACLOperation(f.Operation), Permission: metadata.ACLPermission(f.PermissionType),
	}
}

// FilterUnknown says why Kafka refuses a filter holding a code it does
// not define or UNKNOWN (AclControlManager.validateFilter), or "".
func FilterUnknown(f metadata.ACLFilter) string {
	if f.ResourceType.String() == "UNKNOWN" || f.PatternType.String() == "UNKNOWN" {
		return "Unknown patternFilter."
	}
	if f.Operation.String() == "UNKNOWN" || f.Permission.String() == "UNKNOWN" {
		return "Unknown entryFilter."
	}
	return ""
}

// DeleteAcls computes the records and response of a DeleteAcls request.
func (c *Controller) DeleteAcls(im *metadata.Image, req *kmsg.DeleteACLsRequest) ([]metadata.Record, *kmsg.DeleteACLsResponse) {
	resp := kmsg.NewPtrDeleteACLsResponse()
	resp.Version = req.Version
	removed := map[metadata.ACLBinding]bool{}
	var records []metadata.Record
	for _, rf := range req.Filters {
		r := kmsg.NewDeleteACLsResponseResult()
		f := DeleteFilter(rf)
		if msg := FilterUnknown(f); msg != "" {
			r.ErrorCode, r.ErrorMessage = errMessage(kerr.InvalidRequest, msg)
			resp.Results = append(resp.Results, r)
			continue
		}
		matches := im.ACLs(f)
		var recs []metadata.Record
		for _, b := range matches {
			if !removed[b] {
				recs = append(recs, &metadata.RemoveAccessControlEntryRecord{Binding: b})
			}
		}
		if len(records)+len(recs) > MaxRecordsPerOperation {
			r.ErrorCode, r.ErrorMessage = errMessage(kerr.UnknownServerError, "")
			resp.Results = append(resp.Results, r)
			continue
		}
		for _, rec := range recs {
			removed[rec.(*metadata.RemoveAccessControlEntryRecord).Binding] = true
		}
		records = append(records, recs...)
		for _, b := range matches {
			r.MatchingACLs = append(r.MatchingACLs, matchingACL(b))
		}
		resp.Results = append(resp.Results, r)
	}
	return records, resp
}

func matchingACL(b metadata.ACLBinding) kmsg.DeleteACLsResponseResultMatchingACL {
	m := kmsg.NewDeleteACLsResponseResultMatchingACL()
	m.ResourceType, m.ResourceName = kmsg.ACLResourceType(b.Resource.Type), b.Resource.Name
	m.ResourcePatternType = kmsg.ACLResourcePatternType(b.Resource.PatternType)
	m.Principal, m.Host = b.Entry.Principal, b.Entry.Host
	m.Operation, m.PermissionType = kmsg.ACLOperation(b.Entry.Operation), kmsg.ACLPermissionType(b.Entry.Permission)
	return m
}
