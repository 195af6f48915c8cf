package api

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func (f *fakeController) AlterUserScramCredentials(_ context.Context, req *kmsg.AlterUserSCRAMCredentialsRequest) (*kmsg.AlterUserSCRAMCredentialsResponse, error) {
	if f.failOps != nil {
		return nil, f.failOps
	}
	recs, resp := f.ctrl.AlterUserScramCredentials(f.image, req)
	f.apply(recs...)
	return resp, nil
}

func (f *fakeController) CreateAcls(_ context.Context, req *kmsg.CreateACLsRequest) (*kmsg.CreateACLsResponse, error) {
	if f.failOps != nil {
		return nil, f.failOps
	}
	recs, resp := f.ctrl.CreateAcls(f.image, req)
	f.apply(recs...)
	return resp, nil
}

func (f *fakeController) DeleteAcls(_ context.Context, req *kmsg.DeleteACLsRequest) (*kmsg.DeleteACLsResponse, error) {
	if f.failOps != nil {
		return nil, f.failOps
	}
	recs, resp := f.ctrl.DeleteAcls(f.image, req)
	f.apply(recs...)
	return resp, nil
}

func (f *fakeController) AlterClientQuotas(_ context.Context, req *kmsg.AlterClientQuotasRequest) (*kmsg.AlterClientQuotasResponse, error) {
	if f.failOps != nil {
		return nil, f.failOps
	}
	recs, resp := f.ctrl.AlterClientQuotas(f.image, req)
	f.apply(recs...)
	return resp, nil
}

func securityRegistry(t *testing.T, f *fakeController) *Registry {
	t.Helper()
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{}, BrokerHandlers(f.brokerDeps()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSCRAMCredentialHandlers: AlterUserScramCredentials writes through
// the controller, DescribeUserScramCredentials reads the image (mechanisms
// and iterations only), with Kafka's per-user errors; a controller failure
// answers every user once.
func TestSCRAMCredentialHandlers(t *testing.T) {
	f := newFakeController(t, 1)
	r := securityRegistry(t, f)
	alter := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := func(user string, mech int8, iterations int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		return kmsg.AlterUserSCRAMCredentialsRequestUpsertion{Name: user, Mechanism: mech, Iterations: iterations, Salt: []byte("s"), SaltedPassword: []byte("p")}
	}
	alter.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("alice", 1, 8192), up("bob", 2, 4096), up("carol", 1, 100)}
	resp := reply[*kmsg.AlterUserSCRAMCredentialsResponse](t, r, alter)
	codes := map[string]int16{}
	for _, res := range resp.Results {
		codes[res.User] = res.ErrorCode
	}
	if codes["alice"] != 0 || codes["bob"] != 0 || codes["carol"] != kerr.UnacceptableCredential.Code {
		t.Fatalf("alter: %+v", resp.Results)
	}
	alter.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("alice", 2, 4096)}
	if resp := reply[*kmsg.AlterUserSCRAMCredentialsResponse](t, r, alter); resp.Results[0].ErrorCode != 0 {
		t.Fatalf("second mechanism: %+v", resp.Results)
	}

	describe := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	all := reply[*kmsg.DescribeUserSCRAMCredentialsResponse](t, r, describe)
	if len(all.Results) != 2 || all.Results[0].User != "alice" || len(all.Results[0].CredentialInfos) != 2 ||
		all.Results[0].CredentialInfos[0].Mechanism != 1 || all.Results[0].CredentialInfos[0].Iterations != 8192 ||
		all.Results[1].User != "bob" || all.Results[1].CredentialInfos[0].Mechanism != 2 {
		t.Fatalf("describe all: %+v", all.Results)
	}
	describe.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: "bob"}, {Name: "nobody"}, {Name: "alice"}, {Name: "alice"}}
	some := reply[*kmsg.DescribeUserSCRAMCredentialsResponse](t, r, describe)
	want := []struct {
		user string
		code int16
	}{{"bob", 0}, {"nobody", kerr.ResourceNotFound.Code}, {"alice", kerr.DuplicateResource.Code}}
	if len(some.Results) != len(want) {
		t.Fatalf("describe some: %+v", some.Results)
	}
	for i, w := range want {
		if got := some.Results[i]; got.User != w.user || got.ErrorCode != w.code || (w.code != 0) != (len(got.CredentialInfos) == 0) {
			t.Errorf("result %d: %+v, want %s %d", i, got, w.user, w.code)
		}
	}

	del := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	del.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "bob", Mechanism: 2}, {Name: "dave", Mechanism: 1}}
	resp = reply[*kmsg.AlterUserSCRAMCredentialsResponse](t, r, del)
	if resp.Results[0].User != "bob" || resp.Results[0].ErrorCode != 0 || resp.Results[1].ErrorCode != kerr.ResourceNotFound.Code {
		t.Fatalf("delete: %+v", resp.Results)
	}
	if users := f.image.ScramUsers(); !slices.Equal(users, []string{"alice"}) {
		t.Fatalf("users after delete: %v", users)
	}

	f.failOps = ErrNotController
	alter.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{up("erin", 1, 4096), up("erin", 2, 4096)}
	alter.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "alice", Mechanism: 1}}
	resp = reply[*kmsg.AlterUserSCRAMCredentialsResponse](t, r, alter)
	if len(resp.Results) != 2 || resp.Results[0].User != "alice" || resp.Results[1].ErrorCode != kerr.NotController.Code {
		t.Fatalf("controller failure: %+v", resp.Results)
	}
}

func aclCreation(typ kmsg.ACLResourceType, pattern kmsg.ACLResourcePatternType, name, principal string, op kmsg.ACLOperation) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourcePatternType, c.ResourceName = typ, pattern, name
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, kmsg.ACLPermissionTypeAllow
	return c
}

// TestACLHandlers: CreateAcls, DescribeAcls and DeleteAcls end to end on
// the broker registry, v1 and v3; UNKNOWN codes close the connection as
// Kafka's request parsing does.
func TestACLHandlers(t *testing.T) {
	f := newFakeController(t, 1)
	r := securityRegistry(t, f)
	create := kmsg.NewPtrCreateACLsRequest()
	create.SetVersion(3)
	create.Creations = []kmsg.CreateACLsRequestCreation{
		aclCreation(kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeLiteral, "orders", "User:alice", kmsg.ACLOperationRead),
		aclCreation(kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypePrefixed, "ord", "User:bob", kmsg.ACLOperationWrite),
		aclCreation(kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeLiteral, "*", "User:carol", kmsg.ACLOperationDescribe),
		aclCreation(kmsg.ACLResourceTypeGroup, kmsg.ACLResourcePatternTypeLiteral, "g", "User:alice", kmsg.ACLOperationRead),
		aclCreation(kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeMatch, "x", "User:alice", kmsg.ACLOperationRead),
	}
	cr := reply[*kmsg.CreateACLsResponse](t, r, create)
	for i, res := range cr.Results {
		want := int16(0)
		if i == 4 {
			want = kerr.InvalidRequest.Code
		}
		if res.ErrorCode != want {
			t.Errorf("creation %d: %+v", i, res)
		}
	}

	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.SetVersion(1)
	describe.ResourceType, describe.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeMatch
	describe.ResourceName = kmsg.StringPtr("orders")
	describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	dr := reply[*kmsg.DescribeACLsResponse](t, r, describe)
	var got []string
	for _, res := range dr.Resources {
		for _, acl := range res.ACLs {
			got = append(got, res.ResourcePatternType.String()+":"+res.ResourceName+":"+acl.Principal)
		}
	}
	if want := []string{"LITERAL:*:User:carol", "LITERAL:orders:User:alice", "PREFIXED:ord:User:bob"}; dr.ErrorCode != 0 || !slices.Equal(got, want) {
		t.Fatalf("describe match orders: %v, want %v", got, want)
	}
	describe.ResourceType, describe.ResourcePatternType, describe.ResourceName = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, nil
	describe.Principal = kmsg.StringPtr("User:alice")
	if dr := reply[*kmsg.DescribeACLsResponse](t, r, describe); len(dr.Resources) != 2 {
		t.Fatalf("describe alice's: %+v", dr.Resources)
	}

	del := kmsg.NewPtrDeleteACLsRequest()
	del.SetVersion(2)
	filter := kmsg.NewDeleteACLsRequestFilter()
	filter.ResourceType, filter.ResourcePatternType = kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeAny
	filter.Operation, filter.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = []kmsg.DeleteACLsRequestFilter{filter}
	delResp := reply[*kmsg.DeleteACLsResponse](t, r, del)
	if len(delResp.Results) != 1 || len(delResp.Results[0].MatchingACLs) != 3 || f.image.ACLCount() != 1 {
		t.Fatalf("delete topics' acls: %+v, %d left", delResp.Results, f.image.ACLCount())
	}

	// UNKNOWN anywhere closes the connection.
	bad := kmsg.NewPtrDescribeACLsRequest()
	bad.SetVersion(1)
	bad.ResourceType, bad.ResourcePatternType, bad.Operation, bad.PermissionType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, kmsg.ACLOperationAny, 0
	badCreate := kmsg.NewPtrCreateACLsRequest()
	badCreate.SetVersion(1)
	badCreate.Creations = []kmsg.CreateACLsRequestCreation{aclCreation(0, kmsg.ACLResourcePatternTypeLiteral, "t", "User:a", kmsg.ACLOperationRead)}
	badDelete := kmsg.NewPtrDeleteACLsRequest()
	badDelete.SetVersion(1)
	badDelete.Filters = []kmsg.DeleteACLsRequestFilter{kmsg.NewDeleteACLsRequestFilter()}
	for _, req := range []kmsg.Request{bad, badCreate, badDelete} {
		if resp := serve(t, r, req); resp.CloseReason() == nil {
			t.Errorf("key %d with UNKNOWN: not closed", req.Key())
		}
	}

	f.failOps = context.DeadlineExceeded
	if cr := reply[*kmsg.CreateACLsResponse](t, r, create); len(cr.Results) != 5 || cr.Results[4].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("create on a timeout: %+v", cr.Results)
	}
	if dr := reply[*kmsg.DeleteACLsResponse](t, r, del); len(dr.Results) != 1 || dr.Results[0].ErrorCode != kerr.RequestTimedOut.Code {
		t.Fatalf("delete on a timeout: %+v", dr.Results)
	}
}

func quotaEntity(parts ...string) []kmsg.AlterClientQuotasRequestEntryEntity {
	var out []kmsg.AlterClientQuotasRequestEntryEntity
	for i := 0; i < len(parts); i += 2 {
		e := kmsg.AlterClientQuotasRequestEntryEntity{Type: parts[i]}
		if parts[i+1] != "<default>" {
			e.Name = kmsg.StringPtr(parts[i+1])
		}
		out = append(out, e)
	}
	return out
}

// TestClientQuotaHandlers: AlterClientQuotas writes, DescribeClientQuotas
// matches exact names, defaults and any name, strict or not, and refuses
// malformed filters for the whole request.
func TestClientQuotaHandlers(t *testing.T) {
	f := newFakeController(t, 1)
	r := securityRegistry(t, f)
	alter := kmsg.NewPtrAlterClientQuotasRequest()
	alter.SetVersion(1)
	set := func(key string, v float64) []kmsg.AlterClientQuotasRequestEntryOp {
		return []kmsg.AlterClientQuotasRequestEntryOp{{Key: key, Value: v}}
	}
	alter.Entries = []kmsg.AlterClientQuotasRequestEntry{
		{Entity: quotaEntity("user", "alice"), Ops: set("producer_byte_rate", 1024)},
		{Entity: quotaEntity("user", "<default>"), Ops: set("producer_byte_rate", 512)},
		{Entity: quotaEntity("user", "alice", "client-id", "c1"), Ops: set("request_percentage", 12.5)},
		{Entity: quotaEntity("client-id", "<default>"), Ops: set("consumer_byte_rate", 64)},
		{Entity: quotaEntity("user", "bob"), Ops: set("producer_byte_rate", -1)},
	}
	ar := reply[*kmsg.AlterClientQuotasResponse](t, r, alter)
	if len(ar.Entries) != 5 || ar.Entries[0].ErrorCode != 0 || ar.Entries[4].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("alter: %+v", ar.Entries)
	}

	describe := func(strict bool, comps ...kmsg.DescribeClientQuotasRequestComponent) *kmsg.DescribeClientQuotasResponse {
		req := kmsg.NewPtrDescribeClientQuotasRequest()
		req.SetVersion(1)
		req.Strict, req.Components = strict, comps
		return reply[*kmsg.DescribeClientQuotasResponse](t, r, req)
	}
	comp := func(typ string, match kmsg.QuotasMatchType, name *string) kmsg.DescribeClientQuotasRequestComponent {
		return kmsg.DescribeClientQuotasRequestComponent{EntityType: typ, MatchType: match, Match: name}
	}
	count := func(resp *kmsg.DescribeClientQuotasResponse) int {
		if resp.ErrorCode != 0 {
			t.Fatalf("describe: %v %v", resp.ErrorCode, resp.ErrorMessage)
		}
		return len(resp.Entries)
	}
	alice := kmsg.StringPtr("alice")
	for _, tc := range []struct {
		name   string
		strict bool
		comps  []kmsg.DescribeClientQuotasRequestComponent
		want   int
	}{
		{"everything", false, nil, 4},
		{"user alice", false, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeExact, alice)}, 2},
		{"user alice strict", true, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeExact, alice)}, 1},
		{"default user", false, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeDefault, nil)}, 1},
		{"any user", false, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeAny, nil)}, 3},
		{"any client strict", true, []kmsg.DescribeClientQuotasRequestComponent{comp("client-id", kmsg.QuotasMatchTypeAny, nil)}, 1},
		{"alice and any client", false, []kmsg.DescribeClientQuotasRequestComponent{
			comp("user", kmsg.QuotasMatchTypeExact, alice), comp("client-id", kmsg.QuotasMatchTypeAny, nil)}, 1},
	} {
		if got := count(describe(tc.strict, tc.comps...)); got != tc.want {
			t.Errorf("%s: %d entries, want %d", tc.name, got, tc.want)
		}
	}
	one := describe(true, comp("user", kmsg.QuotasMatchTypeExact, alice))
	if e := one.Entries[0]; len(e.Entity) != 1 || *e.Entity[0].Name != "alice" || e.Values[0].Key != "producer_byte_rate" || e.Values[0].Value != 1024 {
		t.Fatalf("alice's entry: %+v", one.Entries)
	}
	for _, tc := range []struct {
		comps []kmsg.DescribeClientQuotasRequestComponent
		code  int16
	}{
		{[]kmsg.DescribeClientQuotasRequestComponent{comp("", kmsg.QuotasMatchTypeAny, nil)}, kerr.InvalidRequest.Code},
		{[]kmsg.DescribeClientQuotasRequestComponent{comp("group", kmsg.QuotasMatchTypeAny, nil)}, kerr.UnsupportedVersion.Code},
		{[]kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeExact, nil)}, kerr.InvalidRequest.Code},
		{[]kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeDefault, alice)}, kerr.InvalidRequest.Code},
		{[]kmsg.DescribeClientQuotasRequestComponent{comp("user", 7, nil)}, kerr.InvalidRequest.Code},
		{[]kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeAny, nil), comp("user", kmsg.QuotasMatchTypeDefault, nil)}, kerr.InvalidRequest.Code},
		{[]kmsg.DescribeClientQuotasRequestComponent{comp("ip", kmsg.QuotasMatchTypeAny, nil), comp("user", kmsg.QuotasMatchTypeAny, nil)}, kerr.InvalidRequest.Code},
	} {
		if resp := describe(false, tc.comps...); resp.ErrorCode != tc.code || resp.ErrorMessage == nil || len(resp.Entries) != 0 {
			t.Errorf("%+v: %d %v, want %d", tc.comps, resp.ErrorCode, resp.ErrorMessage, tc.code)
		}
	}

	f.failOps = errors.New("disk gone")
	ar = reply[*kmsg.AlterClientQuotasResponse](t, r, alter)
	if len(ar.Entries) != 5 || ar.Entries[2].ErrorCode != kerr.UnknownServerError.Code || len(ar.Entries[2].Entity) != 2 {
		t.Fatalf("controller failure: %+v", ar.Entries)
	}
	if n := len(f.image.QuotaEntities()); n != 4 {
		t.Fatalf("%d entities", n)
	}
}
