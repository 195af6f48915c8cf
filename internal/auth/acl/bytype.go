package acl

import (
	"net/netip"
	"strings"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/metadata"
)

// byTypeProbe is the name Kafka's Authorizer.authorizeByResourceType first
// authorizes ("hardcode"), so that super users, and allow.everyone.if.no.acl.found
// when no binding applies to that name, are allowed whatever the other
// bindings say.
const byTypeProbe = "hardcode"

// AuthorizeByResourceType is Kafka's Authorizer.authorizeByResourceType
// (the default method StandardAuthorizer keeps): whether p may perform op
// on at least one resource of type t. After the probe above, the
// principal's bindings for op (or ALL) on t are read, without implied
// operations: a LITERAL "*" DENY denies; a LITERAL "*" ALLOW allows; an
// ALLOW on a LITERAL name allows unless a DENY names the same literal or a
// PREFIXED DENY prefixes it; an ALLOW on a PREFIXED name allows unless a
// PREFIXED DENY prefixes it. InitProducerId without a transactional id
// uses it: WRITE on any topic implies IDEMPOTENT_WRITE.
func (a *Authorizer) AuthorizeByResourceType(p auth.Principal, host string, op metadata.ACLOperation, t metadata.ACLResourceType) bool {
	if a.Authorize(p, host, op, t, byTypeProbe) {
		return true
	}
	return ByResourceType(a.bindings(), p, host, op, t)
}

// ByResourceType is the part of AuthorizeByResourceType after the probe.
func ByResourceType(b Bindings, p auth.Principal, host string, op metadata.ACLOperation, t metadata.ACLResourceType) bool {
	deny := map[metadata.ACLPatternType]map[string]bool{
		metadata.ACLPatternLiteral: {}, metadata.ACLPatternPrefixed: {},
	}
	allow := map[metadata.ACLPatternType][]string{}
	wildcardAllow := false
	for _, bd := range b.ACLs(metadata.ACLFilter{ResourceType: t, PatternType: metadata.ACLPatternAny,
		Operation: metadata.ACLOpAny, Permission: metadata.ACLPermissionAny}) {
		e, r := bd.Entry, bd.Resource
		if !HostMatches(e.Host, host) || !principalMatches(e.Principal, p) {
			continue
		}
		if e.Operation != op && e.Operation != metadata.ACLOpAll {
			continue
		}
		literalWildcard := r.PatternType == metadata.ACLPatternLiteral && r.Name == metadata.ACLWildcard
		switch e.Permission {
		case metadata.ACLPermissionDeny:
			if literalWildcard {
				return false
			}
			deny[r.PatternType][r.Name] = true
		case metadata.ACLPermissionAllow:
			if literalWildcard {
				wildcardAllow = true
				continue
			}
			allow[r.PatternType] = append(allow[r.PatternType], r.Name)
		}
	}
	if wildcardAllow {
		return true
	}
	dominated := func(name string) bool {
		for i := 1; i <= len(name); i++ {
			if deny[metadata.ACLPatternPrefixed][name[:i]] {
				return true
			}
		}
		return false
	}
	for _, name := range allow[metadata.ACLPatternLiteral] {
		if !deny[metadata.ACLPatternLiteral][name] && !dominated(name) {
			return true
		}
	}
	for _, name := range allow[metadata.ACLPatternPrefixed] {
		if !dominated(name) {
			return true
		}
	}
	return false
}

// SupportedOperations are the operations a resource type has (Kafka's
// AclEntry.supportedOperations in 4.4), whose bits KIP-430's authorized
// operations report.
func SupportedOperations(t metadata.ACLResourceType) []metadata.ACLOperation {
	switch t {
	case metadata.ACLResourceTopic:
		return []metadata.ACLOperation{metadata.ACLOpRead, metadata.ACLOpWrite, metadata.ACLOpCreate, metadata.ACLOpDescribe,
			metadata.ACLOpDelete, metadata.ACLOpAlter, metadata.ACLOpDescribeConfigs, metadata.ACLOpAlterConfigs}
	case metadata.ACLResourceGroup:
		return []metadata.ACLOperation{metadata.ACLOpRead, metadata.ACLOpDescribe, metadata.ACLOpDelete,
			metadata.ACLOpDescribeConfigs, metadata.ACLOpAlterConfigs}
	case metadata.ACLResourceCluster:
		return []metadata.ACLOperation{metadata.ACLOpCreate, metadata.ACLOpClusterAction, metadata.ACLOpDescribeConfigs,
			metadata.ACLOpAlterConfigs, metadata.ACLOpIdempotentWrite, metadata.ACLOpAlter, metadata.ACLOpDescribe}
	case metadata.ACLResourceTransactionalID:
		return []metadata.ACLOperation{metadata.ACLOpDescribe, metadata.ACLOpWrite, metadata.ACLOpTwoPhaseCommit}
	case metadata.ACLResourceDelegationToken:
		return []metadata.ACLOperation{metadata.ACLOpDescribe}
	case metadata.ACLResourceUser:
		return []metadata.ACLOperation{metadata.ACLOpCreateTokens, metadata.ACLOpDescribeTokens}
	}
	return nil
}

// AuthorizedOperations is AuthHelper.authorizedOperations: the bit field
// (bit n for operation code n) of the supported operations p may perform
// on the resource.
func (a *Authorizer) AuthorizedOperations(p auth.Principal, host string, t metadata.ACLResourceType, name string) int32 {
	var bits int32
	for _, op := range SupportedOperations(t) {
		if a.Authorize(p, host, op, t, name) {
			bits |= 1 << op
		}
	}
	return bits
}

// HostAddress renders an address as Java's InetAddress.getHostAddress,
// the host string Kafka compares ACL hosts with: dotted IPv4 (an
// IPv4-mapped IPv6 address too), IPv6 as eight hexadecimal groups without
// leading zeros or "::" compression, and the zone after "%".
func HostAddress(addr netip.Addr) string {
	if addr.Is4() || addr.Is4In6() {
		return addr.Unmap().String()
	}
	b := addr.As16()
	var sb strings.Builder
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			sb.WriteByte(':')
		}
		sb.WriteString(strings.TrimLeft(hex4(b[i], b[i+1]), "0"))
		if sb.Len() == 0 || sb.String()[sb.Len()-1] == ':' {
			sb.WriteByte('0')
		}
	}
	if z := addr.Zone(); z != "" {
		sb.WriteString("%" + z)
	}
	return sb.String()
}

func hex4(hi, lo byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[hi>>4], digits[hi&15], digits[lo>>4], digits[lo&15]})
}
