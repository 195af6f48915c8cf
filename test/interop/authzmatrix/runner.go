package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// acl is one ALLOW binding for User:alice on a LITERAL resource, from any
// host.
type acl struct {
	rt   kmsg.ACLResourceType
	name string
	op   kmsg.ACLOperation
}

func (a acl) String() string { return a.op.String() + " " + a.rt.String() + ":" + a.name }

func topicACL(op kmsg.ACLOperation, name string) acl {
	return acl{kmsg.ACLResourceTypeTopic, name, op}
}
func groupACL(op kmsg.ACLOperation, name string) acl {
	return acl{kmsg.ACLResourceTypeGroup, name, op}
}
func txnACL(op kmsg.ACLOperation, name string) acl {
	return acl{kmsg.ACLResourceTypeTransactionalId, name, op}
}
func clusterACL(op kmsg.ACLOperation) acl {
	return acl{kmsg.ACLResourceTypeCluster, "kafka-cluster", op}
}

// step is one request at a pinned version, sent once with nothing granted
// and once after each stage's ACLs are added to the previous ones'.
type step struct {
	key     int16
	what    string
	build   func() kmsg.Request
	stages  [][]acl
	topOnly bool // print only the top-level error code
	noRetry bool // print the first answer, retriable or not
}

type runner struct {
	ctx    context.Context
	admin  *kgo.Client
	alice  *kgo.Client
	broker int32
	held   []acl
	keys   []int16
}

func run(ctx context.Context, bootstrap, dir string) error {
	admin, err := client(bootstrap, dir, "admin")
	if err != nil {
		return err
	}
	defer admin.Close()
	alice, err := client(bootstrap, dir, "alice")
	if err != nil {
		return err
	}
	defer alice.Close()
	r := &runner{ctx: ctx, admin: admin, alice: alice}
	if err := r.setup(); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	for _, s := range steps() {
		if err := r.run(s); err != nil {
			return fmt.Errorf("key %d %s: %w", s.key, s.what, err)
		}
	}
	slices.Sort(r.keys)
	r.keys = slices.Compact(r.keys)
	fmt.Printf("covered %d keys: %v\n", len(r.keys), r.keys)
	return nil
}

// setupTopics are created by the super user before the steps.
var setupTopics = []string{"t0", "t1", "t2", "t3", "t8", "t9", "t20", "t21", "t22", "t23", "t24", "t27", "t28",
	"t32", "t33", "t37", "t43", "t44", "t45", "t47", "t61", "t68"}

func (r *runner) setup() error {
	md := kmsg.NewPtrMetadataRequest()
	resp, err := md.RequestWith(r.ctx, r.admin)
	if err != nil {
		return err
	}
	if len(resp.Brokers) != 1 {
		return fmt.Errorf("want one broker, metadata lists %d", len(resp.Brokers))
	}
	r.broker = resp.Brokers[0].NodeID
	// The coordinators' topics exist before the steps, so that the group
	// and transaction steps reach a loaded coordinator.
	for _, key := range []struct {
		typ int8
		key string
	}{{0, "setup"}, {1, "setup"}} {
		if err := r.waitFor("a coordinator", func() bool {
			fc := kmsg.NewPtrFindCoordinatorRequest()
			fc.SetVersion(4)
			fc.CoordinatorType, fc.CoordinatorKeys = key.typ, []string{key.key}
			resp, err := fc.RequestWith(r.ctx, r.admin)
			return err == nil && len(resp.Coordinators) == 1 && resp.Coordinators[0].ErrorCode == 0
		}); err != nil {
			return err
		}
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	create.SetVersion(7)
	create.TimeoutMillis = 30000
	for _, name := range setupTopics {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = name, 1, 1
		create.Topics = append(create.Topics, t)
	}
	cresp, err := create.RequestWith(r.ctx, r.admin)
	if err != nil {
		return err
	}
	for _, t := range cresp.Topics {
		if t.ErrorCode != 0 {
			return fmt.Errorf("create %s: %s", t.Topic, codeName(t.ErrorCode))
		}
	}
	return r.waitFor("topics with leaders", func() bool {
		md := kmsg.NewPtrMetadataRequest()
		for _, n := range setupTopics {
			md.Topics = append(md.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(n)})
		}
		resp, err := md.RequestWith(r.ctx, r.admin)
		if err != nil {
			return false
		}
		for _, t := range resp.Topics {
			if t.ErrorCode != 0 || len(t.Partitions) != 1 || t.Partitions[0].Leader < 0 {
				return false
			}
		}
		return len(resp.Topics) == len(setupTopics)
	})
}

func (r *runner) run(s step) error {
	r.keys = append(r.keys, s.key)
	if err := r.send(s); err != nil {
		return err
	}
	for _, grants := range s.stages {
		if err := r.grant(grants); err != nil {
			return err
		}
		if err := r.send(s); err != nil {
			return err
		}
	}
	return r.revokeAll()
}

// send sends the step's request as alice to the one broker and prints its
// line; answers naming a coordinator or leader still being made are
// retried for a while.
func (r *runner) send(s step) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		req := s.build()
		v := req.GetVersion()
		resp, err := r.alice.Broker(int(r.broker)).Request(r.ctx, pinned{req, v})
		if err != nil {
			return err
		}
		if got := req.GetVersion(); got != v {
			return fmt.Errorf("the broker took v%d, not v%d", got, v)
		}
		got, retry := items(resp)
		if s.topOnly {
			got = slices.DeleteFunc(got, func(it string) bool { return strings.Contains(it, "[") })
		}
		if retry && !s.noRetry && time.Now().Before(deadline) {
			select {
			case <-r.ctx.Done():
				return r.ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		held := "nothing"
		if len(r.held) > 0 {
			var hs []string
			for _, a := range r.held {
				hs = append(hs, a.String())
			}
			held = strings.Join(hs, ", ")
		}
		fmt.Printf("%d %s v%d %s | alice holds %s | %s\n", s.key, kmsg.NameForKey(s.key), req.GetVersion(), s.what, held, strings.Join(got, " "))
		return nil
	}
}

// grant adds ALLOW bindings for alice and waits until the broker's
// authorizer lists them all.
func (r *runner) grant(acls []acl) error {
	if len(acls) == 0 {
		return nil // a stage that sends the request again
	}
	req := kmsg.NewPtrCreateACLsRequest()
	req.SetVersion(3)
	for _, a := range acls {
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.ResourcePatternType = a.rt, a.name, kmsg.ACLResourcePatternTypeLiteral
		c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", a.op, kmsg.ACLPermissionTypeAllow
		req.Creations = append(req.Creations, c)
	}
	resp, err := req.RequestWith(r.ctx, r.admin)
	if err != nil {
		return err
	}
	for _, res := range resp.Results {
		if res.ErrorCode != 0 {
			return fmt.Errorf("grant: %s", codeName(res.ErrorCode))
		}
	}
	r.held = append(r.held, acls...)
	want := len(r.held)
	return r.waitFor("granted ACLs", func() bool { return r.aliceACLs() == want })
}

// revokeAll deletes alice's bindings and waits until none is listed.
func (r *runner) revokeAll() error {
	req := kmsg.NewPtrDeleteACLsRequest()
	req.SetVersion(3)
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	f.Principal = kmsg.StringPtr("User:alice")
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	req.Filters = append(req.Filters, f)
	if _, err := req.RequestWith(r.ctx, r.admin); err != nil {
		return err
	}
	r.held = nil
	return r.waitFor("revoked ACLs", func() bool { return r.aliceACLs() == 0 })
}

// aliceACLs counts the bindings the broker lists for alice (-1 on error).
func (r *runner) aliceACLs() int {
	req := kmsg.NewPtrDescribeACLsRequest()
	req.SetVersion(3)
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Principal = kmsg.StringPtr("User:alice")
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := r.admin.Broker(int(r.broker)).Request(r.ctx, req)
	if err != nil {
		return -1
	}
	d := resp.(*kmsg.DescribeACLsResponse)
	if d.ErrorCode != 0 {
		return -1
	}
	n := 0
	for _, res := range d.Resources {
		n += len(res.ACLs)
	}
	return n
}

func (r *runner) waitFor(what string, ok func() bool) error {
	for !ok() {
		select {
		case <-r.ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, r.ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// pinned sends a request at exactly its version: kgo sends the smaller of
// MaxVersion and the broker's maximum.
type pinned struct {
	kmsg.Request
	v int16
}

func (p pinned) MaxVersion() int16 { return p.v }
