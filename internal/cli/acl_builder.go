package cli

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// parseOperations reads --operation values (Kafka's AclOperation names,
// any case, with or without underscores).
func parseOperations(names []string) ([]kadm.ACLOperation, error) {
	var ops []kadm.ACLOperation
	for _, n := range names {
		op, err := kmsg.ParseACLOperation(n)
		if err != nil || op == kmsg.ACLOperationAny || op == kmsg.ACLOperationUnknown {
			return nil, fmt.Errorf("--operation %q: not one of Kafka's operations (Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens, All)", n)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

func (f *aclFlags) patternType(creating bool) (kadm.ACLPattern, error) {
	p, err := kmsg.ParseACLResourcePatternType(f.pattern)
	if err != nil || p == kmsg.ACLResourcePatternTypeUnknown {
		return 0, fmt.Errorf("--resource-pattern-type %q: want LITERAL, PREFIXED, ANY or MATCH", f.pattern)
	}
	if creating && p != kadm.ACLPatternLiteral && p != kadm.ACLPatternPrefixed {
		return 0, fmt.Errorf("--resource-pattern-type %s: bindings are LITERAL or PREFIXED", f.pattern)
	}
	return p, nil
}

func (f *aclFlags) hasResource() bool {
	return len(f.topics)+len(f.groups)+len(f.txnIDs) > 0 || f.cluster
}

// entries applies the principal and host flags, hosts defaulting to "*"
// as kafka-acls does.
func (f *aclFlags) entries(b *kadm.ACLBuilder) *kadm.ACLBuilder {
	hosts := func(h []string) []string {
		if len(h) == 0 {
			return []string{"*"}
		}
		return h
	}
	if len(f.allow) > 0 {
		b.Allow(f.allow...).AllowHosts(hosts(f.allowHosts)...)
	}
	if len(f.deny) > 0 {
		b.Deny(f.deny...).DenyHosts(hosts(f.denies)...)
	}
	return b
}

// resources applies the resource flags to a builder.
func (f *aclFlags) resources(b *kadm.ACLBuilder) *kadm.ACLBuilder {
	return b.MaybeTopics(f.topics...).MaybeGroups(f.groups...).MaybeTransactionalIDs(f.txnIDs...).MaybeClusters(f.cluster)
}

// createBuilders are the bindings create asks for: the operations on every
// resource given, and the --producer and --consumer sets.
func (f *aclFlags) createBuilders() ([]*kadm.ACLBuilder, error) {
	if len(f.allow)+len(f.deny) == 0 {
		return nil, errors.New("create: give --allow-principal or --deny-principal")
	}
	if !f.hasResource() {
		return nil, errors.New("create: give a resource (--topic, --group, --transactional-id, --cluster)")
	}
	pattern, err := f.patternType(true)
	if err != nil {
		return nil, err
	}
	ops, err := parseOperations(f.operations)
	if err != nil {
		return nil, err
	}
	if len(ops) == 0 && !f.producer && !f.consumer {
		return nil, errors.New("create: give --operation, --producer or --consumer")
	}
	newB := func() *kadm.ACLBuilder { return f.entries(kadm.NewACLs()).ResourcePatternType(pattern) }
	var out []*kadm.ACLBuilder
	if len(ops) > 0 {
		out = append(out, f.resources(newB()).Operations(ops...))
	}
	if f.producer && len(f.topics) > 0 {
		out = append(out, newB().Topics(f.topics...).Operations(kadm.OpWrite, kadm.OpDescribe, kadm.OpCreate))
	}
	if f.producer && len(f.txnIDs) > 0 {
		out = append(out, newB().TransactionalIDs(f.txnIDs...).Operations(kadm.OpWrite, kadm.OpDescribe))
	}
	if f.producer && f.idempotent {
		out = append(out, newB().Clusters().Operations(kadm.OpIdempotentWrite))
	}
	if f.consumer && len(f.topics) > 0 {
		out = append(out, newB().Topics(f.topics...).Operations(kadm.OpRead, kadm.OpDescribe))
	}
	if f.consumer && len(f.groups) > 0 {
		out = append(out, newB().Groups(f.groups...).Operations(kadm.OpRead))
	}
	for _, b := range out {
		if err := b.ValidateCreate(); err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
	}
	return out, nil
}

// filter is the filter list and delete use. list: no resource flag lists
// every binding, --principal narrows to a principal's. delete: the entry
// flags as given, every operation unless --operation names some.
func (f *aclFlags) filter(list bool) (*kadm.ACLBuilder, error) {
	pattern, err := f.patternType(false)
	if err != nil {
		return nil, err
	}
	b := kadm.NewACLs().ResourcePatternType(pattern)
	switch {
	case f.hasResource():
		f.resources(b)
	case list:
		b.AnyResource().ResourcePatternType(kadm.ACLPatternAny)
	default:
		return nil, errors.New("delete: give a resource (--topic, --group, --transactional-id, --cluster)")
	}
	if list {
		return b.Allow(f.principals...).Deny(f.principals...).AllowHosts().DenyHosts().Operations(), nil
	}
	if len(f.allow)+len(f.deny) == 0 {
		b.Allow().Deny().AllowHosts().DenyHosts() // every principal
	} else {
		f.entries(b)
	}
	ops, err := parseOperations(f.operations)
	if err != nil {
		return nil, err
	}
	return b.Operations(ops...), b.ValidateDelete()
}
