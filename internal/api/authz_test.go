package api

import (
	"context"
	"net"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth"
	"github.com/sluice-io/sluice/internal/auth/acl"
	"github.com/sluice-io/sluice/internal/metadata"
	"github.com/sluice-io/sluice/internal/protocol"
)

// authzFixture is a broker registry with Kafka's StandardAuthorizer over
// the fake controller's image (super user User:admin).
type authzFixture struct {
	t *testing.T
	f *fakeController
	r *Registry
}

func newAuthzFixture(t *testing.T) *authzFixture {
	f := newFakeController(t, 1)
	a := acl.New(acl.Options{SuperUsers: []string{"User:admin"}}, func() acl.Bindings { return f.image })
	r, err := NewRegistry(BrokerRelease(), RegistryInfo{Authorizer: a}, BrokerHandlers(f.brokerDeps()))
	if err != nil {
		t.Fatal(err)
	}
	return &authzFixture{t: t, f: f, r: r}
}

// allow grants user op on a resource (LITERAL, or PREFIXED when prefixed).
func (x *authzFixture) allow(user string, op metadata.ACLOperation, t metadata.ACLResourceType, name string, prefixed bool) {
	pt := metadata.ACLPatternLiteral
	if prefixed {
		pt = metadata.ACLPatternPrefixed
	}
	x.f.apply(&metadata.AccessControlEntryRecord{Binding: metadata.ACLBinding{
		Resource: metadata.ACLResource{Type: t, Name: name, PatternType: pt},
		Entry:    metadata.ACLEntry{Principal: "User:" + user, Host: "*", Operation: op, Permission: metadata.ACLPermissionAllow},
	}})
}

// as serves req for user from 10.0.0.7 and decodes the answer.
func as[T kmsg.Response](x *authzFixture, user string, req kmsg.Request) T {
	x.t.Helper()
	wire := kmsg.NewRequestFormatter(kmsg.FormatterClientID("test")).AppendRequest(nil, req, 7)
	h, body, err := protocol.ParseRequestHeader(wire[4:])
	if err != nil {
		x.t.Fatal(err)
	}
	conn := &ConnState{Listener: "PLAINTEXT", Principal: auth.User(user),
		RemoteAddr: &net.TCPAddr{IP: net.ParseIP("10.0.0.7"), Port: 40000}}
	resp, err := x.r.Serve(context.Background(), conn, h, body)
	if err != nil || resp.Body() == nil {
		x.t.Fatalf("serve key %d: %v (close %v)", req.Key(), err, resp.CloseReason())
	}
	decoded := req.ResponseKind()
	decoded.SetVersion(req.GetVersion())
	if err := decoded.ReadFrom(resp.Body().AppendTo(nil)); err != nil {
		x.t.Fatalf("decode: %v", err)
	}
	return decoded.(T)
}

func metadataTopics(resp *kmsg.MetadataResponse) map[string]int16 {
	out := map[string]int16{}
	for _, t := range resp.Topics {
		if t.Topic != nil {
			out[*t.Topic] = t.ErrorCode
		}
	}
	return out
}

// TestAuthorizedMetadata: topics alice may not DESCRIBE are hidden from an
// all-topics answer and TOPIC_AUTHORIZATION_FAILED by name; a READ ACL
// implies DESCRIBE; KIP-430 bits follow the ACLs; the super user sees all.
func TestAuthorizedMetadata(t *testing.T) {
	x := newAuthzFixture(t)
	x.f.createTopic("orders", 1)
	x.f.createTopic("secret", 1)
	all := metadataRequest(12, false)
	if got := metadataTopics(as[*kmsg.MetadataResponse](x, "alice", all)); len(got) != 0 {
		t.Fatalf("alice without ACLs sees %v", got)
	}
	named := metadataRequest(12, false, "orders", "missing")
	got := metadataTopics(as[*kmsg.MetadataResponse](x, "alice", named))
	if got["orders"] != kerr.TopicAuthorizationFailed.Code || got["missing"] != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("by name: %v", got)
	}
	x.allow("alice", metadata.ACLOpRead, metadata.ACLResourceTopic, "ord", true)
	if got := metadataTopics(as[*kmsg.MetadataResponse](x, "alice", all)); len(got) != 1 || got["orders"] != 0 {
		t.Fatalf("READ on ord*: %v", got)
	}
	withOps := metadataRequest(10, false, "orders")
	withOps.IncludeTopicAuthorizedOperations, withOps.IncludeClusterAuthorizedOperations = true, true
	resp := as[*kmsg.MetadataResponse](x, "alice", withOps)
	if resp.Topics[0].AuthorizedOperations != 1<<metadata.ACLOpRead|1<<metadata.ACLOpDescribe || resp.AuthorizedOperations != 0 {
		t.Fatalf("authorized operations: topic %b cluster %b", resp.Topics[0].AuthorizedOperations, resp.AuthorizedOperations)
	}
	if got := metadataTopics(as[*kmsg.MetadataResponse](x, "admin", all)); len(got) != 2 {
		t.Fatalf("super user sees %v", got)
	}
}

// TestAuthorizedAutoCreate: a missing topic is auto-created only with
// CREATE; without it TOPIC_AUTHORIZATION_FAILED and nothing is created.
func TestAuthorizedAutoCreate(t *testing.T) {
	x := newAuthzFixture(t)
	x.allow("alice", metadata.ACLOpDescribe, metadata.ACLResourceTopic, "*", false)
	got := metadataTopics(as[*kmsg.MetadataResponse](x, "alice", metadataRequest(12, true, "auto")))
	if got["auto"] != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("without CREATE: %v", got)
	}
	if _, ok := x.f.image.Topic("auto"); ok {
		t.Fatal("created without CREATE")
	}
	x.allow("alice", metadata.ACLOpCreate, metadata.ACLResourceTopic, "auto", false)
	got = metadataTopics(as[*kmsg.MetadataResponse](x, "alice", metadataRequest(12, true, "auto")))
	if _, created := x.f.image.Topic("auto"); !created || got["auto"] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("with CREATE: %v", got)
	}
}

// TestAuthorizedTopicAdmin: CreateTopics, DeleteTopics and CreatePartitions
// refuse per topic, forwarding only the allowed ones; configs are hidden
// without DESCRIBE_CONFIGS.
func TestAuthorizedTopicAdmin(t *testing.T) {
	x := newAuthzFixture(t)
	x.allow("alice", metadata.ACLOpCreate, metadata.ACLResourceTopic, "a-", true)
	create := kmsg.NewPtrCreateTopicsRequest()
	create.SetVersion(7)
	for _, n := range []string{"a-1", "b-1"} {
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = n, 1, 1
		create.Topics = append(create.Topics, ct)
	}
	resp := as[*kmsg.CreateTopicsResponse](x, "alice", create)
	codes := map[string][2]int16{}
	for _, rt := range resp.Topics {
		codes[rt.Topic] = [2]int16{rt.ErrorCode, rt.ConfigErrorCode}
	}
	if codes["a-1"] != [2]int16{0, kerr.TopicAuthorizationFailed.Code} || codes["b-1"][0] != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("create: %v", codes)
	}
	if _, ok := x.f.image.Topic("b-1"); ok {
		t.Fatal("b-1 created without CREATE")
	}
	x.f.createTopic("b-2", 1)
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.SetVersion(6)
	b2, _ := x.f.image.Topic("b-2")
	a1, _ := x.f.image.Topic("a-1")
	del.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: b2.ID}, {TopicID: a1.ID}, {Topic: kmsg.StringPtr("nope")}}
	x.allow("alice", metadata.ACLOpDelete, metadata.ACLResourceTopic, "a-1", false)
	dresp := as[*kmsg.DeleteTopicsResponse](x, "alice", del)
	for _, rt := range dresp.Topics {
		switch {
		case rt.TopicID == b2.ID && (rt.ErrorCode != kerr.TopicAuthorizationFailed.Code || rt.Topic != nil):
			t.Errorf("b-2 by id: %+v (no name: not describable)", rt)
		case rt.TopicID == a1.ID && rt.ErrorCode != 0:
			t.Errorf("a-1 by id: %+v", rt)
		case rt.Topic != nil && *rt.Topic == "nope" && rt.ErrorCode != kerr.TopicAuthorizationFailed.Code:
			t.Errorf("nope by name: %+v", rt)
		}
	}
	if _, ok := x.f.image.Topic("b-2"); !ok {
		t.Fatal("b-2 deleted without DELETE")
	}
	cp := kmsg.NewPtrCreatePartitionsRequest()
	cp.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: "b-2", Count: 3}}
	if r := as[*kmsg.CreatePartitionsResponse](x, "alice", cp); r.Topics[0].ErrorCode != kerr.TopicAuthorizationFailed.Code {
		t.Fatalf("create partitions: %+v", r.Topics)
	}
}

// TestAuthorizedInitProducerID: without a transactional id,
// IDEMPOTENT_WRITE on the cluster or WRITE on any topic; with one, WRITE
// on it.
func TestAuthorizedInitProducerID(t *testing.T) {
	x := newAuthzFixture(t)
	req := kmsg.NewPtrInitProducerIDRequest()
	req.SetVersion(4)
	req.ProducerID, req.ProducerEpoch = -1, -1
	if r := as[*kmsg.InitProducerIDResponse](x, "alice", req); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("no ACL: %v", r.ErrorCode)
	}
	x.allow("alice", metadata.ACLOpWrite, metadata.ACLResourceTopic, "some-", true)
	if r := as[*kmsg.InitProducerIDResponse](x, "alice", req); r.ErrorCode != 0 || r.ProducerID < 0 {
		t.Fatalf("WRITE on a topic: %+v", r)
	}
	req.TransactionalID = kmsg.StringPtr("tx")
	if r := as[*kmsg.InitProducerIDResponse](x, "alice", req); r.ErrorCode != kerr.TransactionalIDAuthorizationFailed.Code {
		t.Fatalf("transactional: %v", r.ErrorCode)
	}
}

// TestAuthorizedClusterAPIs: the ACL and config APIs answer Kafka's
// CLUSTER_AUTHORIZATION_FAILED, and configs per resource.
func TestAuthorizedClusterAPIs(t *testing.T) {
	x := newAuthzFixture(t)
	x.f.createTopic("t", 1)
	describe := kmsg.NewPtrDescribeACLsRequest()
	describe.SetVersion(3)
	describe.ResourceType, describe.ResourcePatternType, describe.Operation, describe.PermissionType = 1, 1, 1, 1
	if r := as[*kmsg.DescribeACLsResponse](x, "alice", describe); r.ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("describe acls: %v", r.ErrorCode)
	}
	if r := as[*kmsg.DescribeACLsResponse](x, "admin", describe); r.ErrorCode != 0 {
		t.Fatalf("describe acls as admin: %v", r.ErrorCode)
	}
	create := kmsg.NewPtrCreateACLsRequest()
	create.SetVersion(3)
	create.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: 2, ResourceName: "t", ResourcePatternType: 3,
		Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}}
	if r := as[*kmsg.CreateACLsResponse](x, "alice", create); r.Results[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("create acls: %+v", r.Results)
	}
	configs := kmsg.NewPtrDescribeConfigsRequest()
	configs.SetVersion(4)
	configs.Resources = []kmsg.DescribeConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "t"},
		{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"},
	}
	r := as[*kmsg.DescribeConfigsResponse](x, "alice", configs)
	codes := map[kmsg.ConfigResourceType]int16{}
	for _, rr := range r.Resources {
		codes[rr.ResourceType] = rr.ErrorCode
	}
	if codes[kmsg.ConfigResourceTypeTopic] != kerr.TopicAuthorizationFailed.Code || codes[kmsg.ConfigResourceTypeBroker] != kerr.ClusterAuthorizationFailed.Code {
		t.Fatalf("describe configs: %v", codes)
	}
	x.allow("alice", metadata.ACLOpAlterConfigs, metadata.ACLResourceTopic, "t", false)
	r = as[*kmsg.DescribeConfigsResponse](x, "alice", configs)
	if !slices.ContainsFunc(r.Resources, func(rr kmsg.DescribeConfigsResponseResource) bool {
		return rr.ResourceType == kmsg.ConfigResourceTypeTopic && rr.ErrorCode == 0 && len(rr.Configs) > 0
	}) {
		t.Fatalf("ALTER_CONFIGS implies DESCRIBE_CONFIGS: %+v", r.Resources)
	}
}

// stubAuthorizer allows exactly the listed (principal, op, type, name).
type stubAuthorizer map[string]bool

func (s stubAuthorizer) key(p auth.Principal, op metadata.ACLOperation, t metadata.ACLResourceType, name string) string {
	return p.String() + " " + op.String() + " " + t.String() + ":" + name
}

func (s stubAuthorizer) Authorize(p auth.Principal, _ string, op metadata.ACLOperation, t metadata.ACLResourceType, name string) bool {
	return s[s.key(p, op, t, name)]
}

func (s stubAuthorizer) AuthorizeByResourceType(auth.Principal, string, metadata.ACLOperation, metadata.ACLResourceType) bool {
	return false
}

func (s stubAuthorizer) AuthorizedOperations(auth.Principal, string, metadata.ACLResourceType, string) int32 {
	return 0
}

// TestControllerAPIsNeedClusterAction: the brokers' requests to a
// controller (AlterPartition here) need CLUSTER_ACTION on the cluster, as
// Kafka's ControllerApis; a principal without it is answered
// CLUSTER_AUTHORIZATION_FAILED and the controller is not asked.
func TestControllerAPIsNeedClusterAction(t *testing.T) {
	ok := kmsg.NewPtrAlterPartitionResponse()
	ok.Topics = []kmsg.AlterPartitionResponseTopic{{Topic: "t"}}
	h := newAlterPartitionHandler(stubAlterer{resp: ok})
	az := stubAuthorizer{}
	az[az.key(auth.User("broker"), metadata.ACLOpClusterAction, metadata.ACLResourceCluster, metadata.ACLClusterName)] = true
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = 3
	for user, want := range map[string]int16{"broker": 0, "alice": kerr.ClusterAuthorizationFailed.Code} {
		conn := &ConnState{Principal: auth.User(user), RemoteAddr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1)}}
		resp := h.Handle(t.Context(), &Request{Body: req, Conn: conn, authz: az}).body.(*kmsg.AlterPartitionResponse)
		if resp.ErrorCode != want || (want != 0) != (len(resp.Topics) == 0) {
			t.Errorf("%s: code %d topics %d, want code %d", user, resp.ErrorCode, len(resp.Topics), want)
		}
	}
}

// TestAclHost: the host the authorizer compares is Java's rendering of
// the client's address.
func TestAclHost(t *testing.T) {
	for addr, want := range map[net.Addr]string{
		&net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 1}:        "10.1.2.3",
		&net.TCPAddr{IP: net.ParseIP("::ffff:10.1.2.3"), Port: 1}: "10.1.2.3",
		&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}:             "0:0:0:0:0:0:0:1",
	} {
		if got := aclHost(&ConnState{RemoteAddr: addr}); got != want {
			t.Errorf("%v: %q, want %q", addr, got, want)
		}
	}
}
