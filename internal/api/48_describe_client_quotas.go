package api

// DescribeClientQuotas (key 48), versions 0-1: the pinned Kafka release's
// range.
//
// Behaviour as Kafka's (ClientQuotasImage.describe over this node's
// published image): each filter component names an entity type (user,
// client-id, ip) and matches an exact name, the default entity, or any
// entity of that type; strict leaves out entities with other types. A
// malformed filter (an empty or repeated type, a match string where none
// belongs or none where one does, an unknown match type, ip with user or
// client-id) is INVALID_REQUEST, an unknown entity type UNSUPPORTED_VERSION,
// for the whole request.
//
// Deviations: entities and their values come sorted (Kafka's follow hash
// order).

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/metadata"
)

func newDescribeClientQuotasHandler(view MetadataView) Handler {
	return Handler{
		Key:        48,
		MinVersion: 0,
		MaxVersion: 1,
		Handle: func(_ context.Context, req *Request) Response {
			body := req.Body.(*kmsg.DescribeClientQuotasRequest)
			// Kafka asks DESCRIBE_CONFIGS on CLUSTER and answers
			// CLUSTER_AUTHORIZATION_FAILED.
			if !req.authorizeCluster(opDescribeConfigs) {
				resp := kmsg.NewPtrDescribeClientQuotasResponse()
				resp.SetVersion(body.Version)
				resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, codeMessage(kerr.ClusterAuthorizationFailed.Code)
				return Reply(resp)
			}
			return Reply(describeClientQuotas(view.Image(), body))
		},
	}
}

// quotaFilter is a parsed filter: exact holds the types matched by name
// (nil name: the default entity), any the types matched whatever the name.
type quotaFilter struct {
	exact  map[string]*string
	any    map[string]bool
	strict bool
}

func describeClientQuotas(im *metadata.Image, req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := kmsg.NewPtrDescribeClientQuotasResponse()
	resp.SetVersion(req.Version)
	f, err, msg := parseQuotaFilter(req)
	if err != nil {
		resp.ErrorCode, resp.ErrorMessage = err.Code, &msg
		return resp
	}
	// Never null: Kafka's admin client reads the entries of a successful
	// answer without a null check (kafka-configs --describe of a user
	// without quotas failed with a NullPointerException).
	resp.Entries = []kmsg.DescribeClientQuotasResponseEntry{}
	for _, e := range im.QuotaEntities() {
		if !f.matches(e) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range e.Parts() {
			ent := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ent.Type, ent.Name = p.Type, p.Name
			entry.Entity = append(entry.Entity, ent)
		}
		quotas := im.ClientQuotas(e)
		for _, k := range slices.Sorted(maps.Keys(quotas)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, quotas[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	return resp
}

// parseQuotaFilter checks the components as Kafka's
// ClientQuotasImage.describe, with its messages.
func parseQuotaFilter(req *kmsg.DescribeClientQuotasRequest) (quotaFilter, *kerr.Error, string) {
	f := quotaFilter{exact: map[string]*string{}, any: map[string]bool{}, strict: req.Strict}
	for _, c := range req.Components {
		_, dupExact := f.exact[c.EntityType]
		switch {
		case c.EntityType == "":
			return f, kerr.InvalidRequest, "Invalid empty entity type."
		case dupExact || f.any[c.EntityType]:
			return f, kerr.InvalidRequest, "Entity type " + c.EntityType + " cannot appear more than once in the filter."
		case c.EntityType != metadata.QuotaEntityUser && c.EntityType != metadata.QuotaEntityClientID && c.EntityType != metadata.QuotaEntityIP:
			return f, kerr.UnsupportedVersion, "Unsupported entity type " + c.EntityType
		}
		switch c.MatchType {
		case kmsg.QuotasMatchTypeExact:
			if c.Match == nil {
				return f, kerr.InvalidRequest, "Request specified MATCH_TYPE_EXACT, but set match string to null."
			}
			f.exact[c.EntityType] = c.Match
		case kmsg.QuotasMatchTypeDefault:
			if c.Match != nil {
				return f, kerr.InvalidRequest, "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."
			}
			f.exact[c.EntityType] = nil
		case kmsg.QuotasMatchTypeAny:
			if c.Match != nil {
				return f, kerr.InvalidRequest, "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."
			}
			f.any[c.EntityType] = true
		default:
			return f, kerr.InvalidRequest, fmt.Sprintf("Unknown match type %d", c.MatchType)
		}
	}
	if f.has(metadata.QuotaEntityIP) && (f.has(metadata.QuotaEntityUser) || f.has(metadata.QuotaEntityClientID)) {
		return f, kerr.InvalidRequest, "Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component."
	}
	return f, nil, ""
}

func (f quotaFilter) has(typ string) bool {
	_, ok := f.exact[typ]
	return ok || f.any[typ]
}

// matches is Kafka's ClientQuotasImage.matches: "any" takes the default
// entity too.
func (f quotaFilter) matches(e metadata.QuotaEntity) bool {
	if f.strict && len(e.Parts()) != len(f.exact)+len(f.any) {
		return false
	}
	for typ, name := range f.exact {
		part, ok := e.Part(typ)
		if !ok || part.Default != (name == nil) || (name != nil && part.Name != *name) {
			return false
		}
	}
	for typ := range f.any {
		if _, ok := e.Part(typ); !ok {
			return false
		}
	}
	return true
}
