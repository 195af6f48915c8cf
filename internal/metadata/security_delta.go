package metadata

// The security part of a Delta: replay of the SCRAM, ACL and client quota
// records, the changes subscribers read, and the image they build.

import (
	"fmt"
	"maps"
	"math"
	"slices"
)

type scramKey struct {
	user string
	mech ScramMechanism
}

// securityDelta holds the security changes of a delta.
type securityDelta struct {
	scram  map[scramKey]*ScramCredential // nil: removed
	acls   map[ACLBinding]bool           // true: added, false: removed
	quotas map[QuotaEntity]map[string]*float64
}

func newSecurityDelta() securityDelta {
	return securityDelta{
		scram:  map[scramKey]*ScramCredential{},
		acls:   map[ACLBinding]bool{},
		quotas: map[QuotaEntity]map[string]*float64{},
	}
}

func (s *securityDelta) isEmpty() bool {
	return len(s.scram) == 0 && len(s.acls) == 0 && len(s.quotas) == 0
}

// ChangedScramUsers returns the users whose credentials changed, sorted.
func (d *Delta) ChangedScramUsers() []string {
	set := map[string]bool{}
	for k := range d.sec.scram {
		set[k.user] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// ChangedACLs returns the bindings the delta added and removed (net of
// each other), sorted.
func (d *Delta) ChangedACLs() (added, removed []ACLBinding) {
	for b, add := range d.sec.acls {
		if add {
			added = append(added, b)
		} else {
			removed = append(removed, b)
		}
	}
	slices.SortFunc(added, compareBindings)
	slices.SortFunc(removed, compareBindings)
	return added, removed
}

// ChangedQuotaEntities returns the entities whose quotas changed, sorted.
func (d *Delta) ChangedQuotaEntities() []QuotaEntity {
	return slices.SortedFunc(maps.Keys(d.sec.quotas), compareQuotaEntities)
}

func (d *Delta) scramExists(k scramKey) bool {
	if c, ok := d.sec.scram[k]; ok {
		return c != nil
	}
	_, ok := d.base.sec.scram[k.user][k.mech]
	return ok
}

func (d *Delta) aclExists(b ACLBinding) bool {
	if add, ok := d.sec.acls[b]; ok {
		return add
	}
	return d.base.HasACL(b)
}

func (d *Delta) quotaExists(e QuotaEntity, key string) bool {
	if v, ok := d.sec.quotas[e][key]; ok {
		return v != nil
	}
	_, ok := d.base.sec.quotas[e][key]
	return ok
}

// replaySecurity applies a security record; handled is false for other
// records.
func (d *Delta) replaySecurity(rec Record) (handled bool, err error) {
	switch r := rec.(type) {
	case *UserScramCredentialRecord:
		return true, d.replayScram(r)
	case *RemoveUserScramCredentialRecord:
		k := scramKey{r.Name, r.Mechanism}
		if !d.scramExists(k) {
			return true, fmt.Errorf("%w: no %s credential for user %q", ErrInconsistentRecord, r.Mechanism, r.Name)
		}
		d.sec.scram[k] = nil
	case *AccessControlEntryRecord:
		if !r.Binding.Concrete() || r.Binding.Resource.Name == "" {
			return true, fmt.Errorf("%w: acl %s", ErrInconsistentRecord, r.Binding)
		}
		if d.aclExists(r.Binding) {
			return true, fmt.Errorf("%w: acl %s exists", ErrInconsistentRecord, r.Binding)
		}
		d.setACL(r.Binding, true)
	case *RemoveAccessControlEntryRecord:
		if !d.aclExists(r.Binding) {
			return true, fmt.Errorf("%w: no acl %s", ErrInconsistentRecord, r.Binding)
		}
		d.setACL(r.Binding, false)
	case *ClientQuotaRecord:
		return true, d.replayQuota(r)
	default:
		return false, nil
	}
	return true, nil
}

func (d *Delta) replayScram(r *UserScramCredentialRecord) error {
	if r.Name == "" || !r.Mechanism.Known() || r.Iterations <= 0 {
		return fmt.Errorf("%w: scram credential user %q mechanism %d iterations %d", ErrInconsistentRecord, r.Name, r.Mechanism, r.Iterations)
	}
	d.sec.scram[scramKey{r.Name, r.Mechanism}] = &ScramCredential{
		Salt: slices.Clone(r.Salt), StoredKey: slices.Clone(r.StoredKey), ServerKey: slices.Clone(r.ServerKey), Iterations: r.Iterations,
	}
	return nil
}

// setACL records an add or a removal; the two cancel out within a delta.
func (d *Delta) setACL(b ACLBinding, add bool) {
	if prev, ok := d.sec.acls[b]; ok && prev != add {
		delete(d.sec.acls, b)
		return
	}
	d.sec.acls[b] = add
}

func (d *Delta) replayQuota(r *ClientQuotaRecord) error {
	if r.Entity.IsEmpty() || r.Key == "" {
		return fmt.Errorf("%w: quota %s key %q", ErrInconsistentRecord, r.Entity, r.Key)
	}
	if r.Remove && !d.quotaExists(r.Entity, r.Key) {
		return fmt.Errorf("%w: no quota %s for %s", ErrInconsistentRecord, r.Key, r.Entity)
	}
	if !r.Remove && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
		return fmt.Errorf("%w: quota %s for %s is %v", ErrInconsistentRecord, r.Key, r.Entity, r.Value)
	}
	changes := d.sec.quotas[r.Entity]
	if changes == nil {
		changes = map[string]*float64{}
		d.sec.quotas[r.Entity] = changes
	}
	if r.Remove {
		changes[r.Key] = nil
	} else {
		v := r.Value
		changes[r.Key] = &v
	}
	return nil
}

// apply builds the security part of the next image from base's.
func (s *securityDelta) apply(base securityState) securityState {
	out := base
	if len(s.scram) > 0 {
		out.scram = applyScram(base.scram, s.scram)
	}
	if len(s.acls) > 0 {
		out.acls, out.aclPrefixLens, out.aclCount = applyACLs(base, s.acls)
	}
	if len(s.quotas) > 0 {
		out.quotas = applyQuotas(base.quotas, s.quotas)
	}
	return out
}

func applyScram(base map[string]map[ScramMechanism]ScramCredential, changes map[scramKey]*ScramCredential) map[string]map[ScramMechanism]ScramCredential {
	out := maps.Clone(base)
	cloned := map[string]bool{}
	for k, c := range changes {
		if !cloned[k.user] {
			out[k.user] = maps.Clone(out[k.user])
			if out[k.user] == nil {
				out[k.user] = map[ScramMechanism]ScramCredential{}
			}
			cloned[k.user] = true
		}
		if c == nil {
			delete(out[k.user], k.mech)
		} else {
			out[k.user][k.mech] = *c
		}
	}
	for user := range cloned {
		if len(out[user]) == 0 {
			delete(out, user)
		}
	}
	return out
}

func applyACLs(base securityState, changes map[ACLBinding]bool) (map[ACLResource][]ACLEntry, map[ACLResourceType][]int, int) {
	acls := maps.Clone(base.acls)
	count := base.aclCount
	touched := map[ACLResource]bool{}
	prefixTypes := map[ACLResourceType]bool{}
	for b, add := range changes {
		if !touched[b.Resource] {
			acls[b.Resource] = slices.Clone(acls[b.Resource])
			touched[b.Resource] = true
		}
		entries := acls[b.Resource]
		i, found := slices.BinarySearchFunc(entries, b.Entry, compareEntries)
		switch {
		case add && !found:
			acls[b.Resource] = slices.Insert(entries, i, b.Entry)
			count++
		case !add && found:
			acls[b.Resource] = slices.Delete(entries, i, i+1)
			count--
		}
		if b.Resource.PatternType == ACLPatternPrefixed {
			prefixTypes[b.Resource.Type] = true
		}
	}
	for r := range touched {
		if len(acls[r]) == 0 {
			delete(acls, r)
		}
	}
	lens := base.aclPrefixLens
	if len(prefixTypes) > 0 {
		lens = maps.Clone(base.aclPrefixLens)
		for t := range prefixTypes {
			lens[t] = prefixLengths(acls, t)
		}
	}
	return acls, lens, count
}

// prefixLengths lists the distinct lengths of a type's PREFIXED names.
func prefixLengths(acls map[ACLResource][]ACLEntry, t ACLResourceType) []int {
	set := map[int]bool{}
	for r := range acls {
		if r.Type == t && r.PatternType == ACLPatternPrefixed {
			set[len(r.Name)] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	return slices.Sorted(maps.Keys(set))
}

func applyQuotas(base map[QuotaEntity]map[string]float64, changes map[QuotaEntity]map[string]*float64) map[QuotaEntity]map[string]float64 {
	out := maps.Clone(base)
	for e, keys := range changes {
		q := maps.Clone(out[e])
		if q == nil {
			q = map[string]float64{}
		}
		for k, v := range keys {
			if v == nil {
				delete(q, k)
			} else {
				q[k] = *v
			}
		}
		if len(q) == 0 {
			delete(out, e)
		} else {
			out[e] = q
		}
	}
	return out
}
