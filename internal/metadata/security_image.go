package metadata

// The security part of an Image: SCRAM credentials by user and mechanism,
// ACL bindings indexed by resource pattern, client quotas by entity. Like
// the rest of the image it is immutable once published; a delta that
// changes it copies the maps it changes and shares the rest.

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"strings"
)

// securityState is the security part of an Image.
type securityState struct {
	scram map[string]map[ScramMechanism]ScramCredential
	// acls holds each resource pattern's entries, sorted.
	acls map[ACLResource][]ACLEntry
	// aclPrefixLens holds, per resource type, the distinct lengths of its
	// PREFIXED names, ascending: a resource's prefixed bindings are found
	// with one lookup per length, not one per prefix of its name.
	aclPrefixLens map[ACLResourceType][]int
	aclCount      int
	quotas        map[QuotaEntity]map[string]float64
}

func emptySecurityState() securityState {
	return securityState{
		scram:         map[string]map[ScramMechanism]ScramCredential{},
		acls:          map[ACLResource][]ACLEntry{},
		aclPrefixLens: map[ACLResourceType][]int{},
		quotas:        map[QuotaEntity]map[string]float64{},
	}
}

// ScramCredential returns a user's credential for a mechanism (the SASL
// SCRAM exchange's lookup).
func (im *Image) ScramCredential(user string, m ScramMechanism) (ScramCredential, bool) {
	c, ok := im.sec.scram[user][m]
	return c, ok
}

// ScramCredentials returns a copy of a user's credentials by mechanism
// (nil when the user has none).
func (im *Image) ScramCredentials(user string) map[ScramMechanism]ScramCredential {
	return maps.Clone(im.sec.scram[user])
}

// ScramUsers returns the users with at least one credential, sorted.
func (im *Image) ScramUsers() []string { return slices.Sorted(maps.Keys(im.sec.scram)) }

// ACLCount is the number of ACL bindings.
func (im *Image) ACLCount() int { return im.sec.aclCount }

// MatchingACLs yields the bindings that apply to a resource of type t
// named name, as Kafka's StandardAuthorizer finds them: LITERAL bindings
// on the name and on the wildcard "*", and PREFIXED bindings whose name is
// a prefix of name. Principals, hosts, operations and permissions are the
// caller's to check. The cost is a map lookup per distinct prefix length
// of the type's prefixed bindings, plus the bindings yielded.
func (im *Image) MatchingACLs(t ACLResourceType, name string) iter.Seq2[ACLResource, ACLEntry] {
	return func(yield func(ACLResource, ACLEntry) bool) {
		lookup := func(r ACLResource) bool {
			for _, e := range im.sec.acls[r] {
				if !yield(r, e) {
					return false
				}
			}
			return true
		}
		if !lookup(ACLResource{Type: t, Name: name, PatternType: ACLPatternLiteral}) {
			return
		}
		if name != ACLWildcard && !lookup(ACLResource{Type: t, Name: ACLWildcard, PatternType: ACLPatternLiteral}) {
			return
		}
		for _, n := range im.sec.aclPrefixLens[t] {
			if n > len(name) {
				return
			}
			if !lookup(ACLResource{Type: t, Name: name[:n], PatternType: ACLPatternPrefixed}) {
				return
			}
		}
	}
}

// ACLs returns the bindings that pass a filter (DescribeAcls, DeleteAcls),
// sorted by resource pattern then entry. A filter naming one resource
// pattern (a concrete type, pattern type and name) or one resource (MATCH
// with a concrete type and a name) reads the index; others scan.
func (im *Image) ACLs(f ACLFilter) []ACLBinding {
	var out []ACLBinding
	add := func(r ACLResource, e ACLEntry) bool {
		if b := (ACLBinding{Resource: r, Entry: e}); f.Matches(b) {
			out = append(out, b)
		}
		return true
	}
	switch {
	case f.Name != nil && f.ResourceType.Concrete() && f.PatternType.Concrete():
		r := ACLResource{Type: f.ResourceType, Name: *f.Name, PatternType: f.PatternType}
		for _, e := range im.sec.acls[r] {
			add(r, e)
		}
	case f.Name != nil && f.ResourceType.Concrete() && f.PatternType == ACLPatternMatch:
		im.MatchingACLs(f.ResourceType, *f.Name)(add)
	default:
		for r, entries := range im.sec.acls {
			for _, e := range entries {
				add(r, e)
			}
		}
	}
	slices.SortFunc(out, compareBindings)
	return out
}

// HasACL reports whether a binding exists.
func (im *Image) HasACL(b ACLBinding) bool {
	_, ok := slices.BinarySearchFunc(im.sec.acls[b.Resource], b.Entry, compareEntries)
	return ok
}

func compareEntries(a, b ACLEntry) int {
	return compareBindings(ACLBinding{Entry: a}, ACLBinding{Entry: b})
}

// ClientQuotas returns a copy of an entity's quotas by key (nil: none).
func (im *Image) ClientQuotas(e QuotaEntity) map[string]float64 { return maps.Clone(im.sec.quotas[e]) }

// ClientQuota returns one quota of an entity.
func (im *Image) ClientQuota(e QuotaEntity, key string) (float64, bool) {
	v, ok := im.sec.quotas[e][key]
	return v, ok
}

// QuotaEntities returns the entities with at least one quota, sorted.
func (im *Image) QuotaEntities() []QuotaEntity {
	return slices.SortedFunc(maps.Keys(im.sec.quotas), compareQuotaEntities)
}

// writeSecurity prints the security part for Image.String. Secrets stay
// out: a credential prints its mechanism, iterations and byte counts.
func (im *Image) writeSecurity(b *strings.Builder) {
	for _, user := range im.ScramUsers() {
		creds := im.sec.scram[user]
		for _, m := range slices.Sorted(maps.Keys(creds)) {
			c := creds[m]
			fmt.Fprintf(b, "scram %q %s iterations=%d salt=%dB stored-key=%dB server-key=%dB\n",
				user, m, c.Iterations, len(c.Salt), len(c.StoredKey), len(c.ServerKey))
		}
	}
	for _, acl := range im.ACLs(AllACLs()) {
		fmt.Fprintf(b, "acl %s %s %q principal=%q host=%q %s %s\n", acl.Resource.Type, acl.Resource.PatternType,
			acl.Resource.Name, acl.Entry.Principal, acl.Entry.Host, acl.Entry.Operation, acl.Entry.Permission)
	}
	for _, e := range im.QuotaEntities() {
		q := im.sec.quotas[e]
		for _, k := range slices.Sorted(maps.Keys(q)) {
			fmt.Fprintf(b, "quota %s %s=%v\n", e, k, q[k])
		}
	}
}

// AllACLs is the filter that matches every binding.
func AllACLs() ACLFilter {
	return ACLFilter{ResourceType: ACLResourceAny, PatternType: ACLPatternAny, Operation: ACLOpAny, Permission: ACLPermissionAny}
}
