// Package acl is Sluice's authorizer: Kafka's StandardAuthorizer over the
// ACL bindings of the published metadata image. It is pure: the caller
// passes the image (or a function returning the current one), the
// principal and the client's host; nothing here reads a clock, a file or
// the network.
//
// Semantics, as StandardAuthorizerData.authorize and findResult:
//   - super.users are allowed everything, whatever the ACLs say;
//   - the bindings that apply to a resource are the LITERAL ones on its
//     name and on "*", and the PREFIXED ones whose name prefixes it;
//   - an entry matches when its principal is the caller's or User:*, its
//     host is "*", the caller's address or a CIDR range holding it
//     (KIP-1276), and its operation is the one asked, ALL, or (ALLOW
//     entries only) one implying it: READ, WRITE, DELETE and ALTER imply
//     DESCRIBE, ALTER_CONFIGS implies DESCRIBE_CONFIGS;
//   - a matching DENY wins; else a matching ALLOW allows; else, when no
//     binding at all applies to the resource, allow.everyone.if.no.acl.found
//     decides; else it is denied.
package acl

import (
	"iter"
	"net/netip"
	"strings"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/metadata"
)

// Kafka's configuration keys and the one authorizer class Sluice builds.
const (
	ClassNameKey       = "authorizer.class.name"
	SuperUsersKey      = "super.users"
	AllowIfNoACLKey    = "allow.everyone.if.no.acl.found"
	StandardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
)

// wildcardPrincipal is the ACL principal every principal matches.
const wildcardPrincipal = "User:*"

// Bindings is the part of the metadata image the authorizer reads
// (*metadata.Image).
type Bindings interface {
	// MatchingACLs yields the bindings that apply to one resource.
	MatchingACLs(t metadata.ACLResourceType, name string) iter.Seq2[metadata.ACLResource, metadata.ACLEntry]
	// ACLs returns the bindings that pass a filter.
	ACLs(f metadata.ACLFilter) []metadata.ACLBinding
}

// Options are the StandardAuthorizer's settings.
type Options struct {
	// SuperUsers are principals ("User:admin") allowed everything.
	SuperUsers []string
	// AllowIfNoACL allows an action on a resource no binding applies to.
	AllowIfNoACL bool
}

// ParseSuperUsers reads super.users as Kafka does: principals separated by
// semicolons, blanks trimmed, each of the form Type:Name.
func ParseSuperUsers(v string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(v, ";") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if _, err := auth.ParsePrincipal(s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Authorizer answers whether a principal from a host may perform an
// operation on a resource, over the bindings current at each call.
type Authorizer struct {
	superUsers   map[string]bool
	allowIfNoACL bool
	bindings     func() Bindings
}

// New returns an authorizer reading the bindings bindings returns at each
// call (the published image).
func New(opts Options, bindings func() Bindings) *Authorizer {
	a := &Authorizer{superUsers: map[string]bool{}, allowIfNoACL: opts.AllowIfNoACL, bindings: bindings}
	for _, s := range opts.SuperUsers {
		a.superUsers[s] = true
	}
	return a
}

// IsSuperUser reports whether p is one of super.users.
func (a *Authorizer) IsSuperUser(p auth.Principal) bool { return a.superUsers[p.String()] }

// Authorize is StandardAuthorizerData.authorize for one action on a
// LITERAL resource name; host is the client's address as Java renders it
// (HostAddress).
func (a *Authorizer) Authorize(p auth.Principal, host string, op metadata.ACLOperation, t metadata.ACLResourceType, name string) bool {
	if a.IsSuperUser(p) {
		return true
	}
	return Decide(a.bindings(), p, host, op, t, name, a.allowIfNoACL)
}

// Decide applies the bindings that apply to (t, name) to the action, as
// StandardAuthorizerData.findAclRule: any matching DENY denies, else any
// matching ALLOW allows, else the default when no binding applies to the
// resource at all, else deny. Super users are the caller's to check.
func Decide(b Bindings, p auth.Principal, host string, op metadata.ACLOperation, t metadata.ACLResourceType, name string, allowIfNoACL bool) bool {
	hasResourceACLs, allowed := false, false
	for _, e := range b.MatchingACLs(t, name) {
		hasResourceACLs = true
		switch entryResult(e, p, host, op) {
		case resultDeny:
			return false
		case resultAllow:
			allowed = true
		}
	}
	if allowed {
		return true
	}
	return !hasResourceACLs && allowIfNoACL
}

type result int

const (
	resultNone result = iota
	resultAllow
	resultDeny
)

// entryResult is findResult: whether one entry on a matching resource
// allows, denies or does not speak to the action.
func entryResult(e metadata.ACLEntry, p auth.Principal, host string, op metadata.ACLOperation) result {
	if !principalMatches(e.Principal, p) || !HostMatches(e.Host, host) {
		return resultNone
	}
	if e.Operation != metadata.ACLOpAll {
		if e.Permission == metadata.ACLPermissionAllow {
			if !impliedBy(op, e.Operation) {
				return resultNone
			}
		} else if op != e.Operation {
			return resultNone
		}
	}
	if e.Permission == metadata.ACLPermissionAllow {
		return resultAllow
	}
	return resultDeny
}

// impliedBy reports whether an ALLOW of granted allows op.
func impliedBy(op, granted metadata.ACLOperation) bool {
	switch op {
	case metadata.ACLOpDescribe:
		switch granted {
		case metadata.ACLOpDescribe, metadata.ACLOpRead, metadata.ACLOpWrite, metadata.ACLOpDelete, metadata.ACLOpAlter:
			return true
		}
		return false
	case metadata.ACLOpDescribeConfigs:
		return granted == metadata.ACLOpDescribeConfigs || granted == metadata.ACLOpAlterConfigs
	}
	return op == granted
}

// principalMatches compares an ACL's principal with the caller's as
// KafkaPrincipal.equals does (type and name), User:* matching everyone.
func principalMatches(aclPrincipal string, p auth.Principal) bool {
	if aclPrincipal == wildcardPrincipal {
		return true
	}
	typ, name, ok := strings.Cut(aclPrincipal, ":")
	return ok && typ == p.Type && name == p.Name
}

// HostMatches reports whether an ACL's host pattern admits host: "*", the
// same string, or a CIDR range holding the address (Kafka's
// CidrUtils.isInRange; an address of the other family is not in range).
func HostMatches(pattern, host string) bool {
	if pattern == metadata.ACLWildcard || pattern == host {
		return true
	}
	if !strings.Contains(pattern, "/") {
		return false
	}
	prefix, err := netip.ParsePrefix(pattern)
	if err != nil {
		return false
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	addr = addr.WithZone("")
	if prefix.Addr().Is4() != addr.Is4() {
		return false
	}
	return prefix.Masked().Contains(addr)
}
