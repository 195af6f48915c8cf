package security

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluice-io/sluice/internal/auth/tlsconf/tlstest"
	"github.com/sluice-io/sluice/internal/testcluster"
	"github.com/sluice-io/sluice/internal/testutil"
)

// startAuthorizedServer serves mTLS (ssl.client.auth=required, the CN as
// the principal) with Kafka's StandardAuthorizer and User:admin a super
// user.
func startAuthorizedServer(t *testing.T, p *pki, extra ...string) *sslServer {
	t.Helper()
	return startSSLServer(t, append(append(p.brokerSSL(t, "required"),
		"ssl.principal.mapping.rules=RULE:^CN=([a-z]+),.*$/$1/L,DEFAULT",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:admin"), extra...)...)
}

// mtlsAdmin is a kadm client presenting leaf's certificate.
func mtlsAdmin(t *testing.T, s *sslServer, p *pki, leaf *tlstest.Leaf, opts ...kgo.Opt) (*kgo.Client, *kadm.Client) {
	t.Helper()
	cl := client(t, s.sslAddr, append([]kgo.Opt{kgo.DialTLSConfig(p.clientTLS(leaf))}, opts...)...)
	return cl, kadm.NewClient(cl)
}

// The authorizer with real processes and clients: principals come from
// client certificates; the super user (admin) creates a topic and ACLs with
// kadm; alice is refused with Kafka's errors (the topic hidden from
// Metadata, TOPIC_AUTHORIZATION_FAILED on produce, GROUP_AUTHORIZATION_FAILED
// on the group, CLUSTER_AUTHORIZATION_FAILED on ACL writes), then, once
// granted WRITE and READ on the topic and READ on the group, produces with
// the idempotent producer (WRITE on a topic implies IDEMPOTENT_WRITE) and
// consumes in a group; a DENY then wins over the ALLOW.
func TestACLsWithMutualTLSPrincipals(t *testing.T) {
	p := newPKI(t)
	s := startAuthorizedServer(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adminCl, admin := mtlsAdmin(t, s, p, p.issue(t, tlstest.LeafOptions{Subject: "CN=admin,OU=ops"}))
	if err := createTopic(ctx, adminCl, "orders", 1, 1); err != nil {
		t.Fatalf("the super user creates a topic: %v", err)
	}
	aliceCert := p.issue(t, tlstest.LeafOptions{Subject: "CN=alice,OU=eng"})
	aliceCl, alice := mtlsAdmin(t, s, p, aliceCert)

	topics, err := alice.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("orders") {
		t.Error("alice without ACLs sees orders in Metadata")
	}
	if code := topicMetadataCode(ctx, t, aliceCl, "orders"); code != kerr.TopicAuthorizationFailed.Code {
		t.Errorf("Metadata for orders: code %d", code)
	}
	prod, _ := mtlsAdmin(t, s, p, aliceCert, kgo.DisableIdempotentWrite(), kgo.RecordRetries(1))
	if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("produce without WRITE: %v", err)
	}
	if _, err := alice.FetchOffsets(ctx, "g1"); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Errorf("offset fetch without READ on the group: %v", err)
	}
	grant := kadm.NewACLs().Topics("orders").Groups("g1").Allow("User:alice").
		Operations(kadm.OpRead, kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := alice.CreateACLs(ctx, grant); err != nil || len(res) == 0 || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("alice creating ACLs: %v %+v", err, res)
	}
	res, err := admin.CreateACLs(ctx, grant)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("admin creating ACLs: %+v", r)
		}
	}

	// Granted: the idempotent producer (franz-go's default) and a group
	// consumer at their defaults.
	idem, _ := mtlsAdmin(t, s, p, aliceCert)
	testutil.Eventually(t, 20*time.Second, func() bool {
		return idem.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("granted")}).FirstErr() == nil
	}, "alice cannot produce once granted WRITE")
	cons, _ := mtlsAdmin(t, s, p, aliceCert, kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("g1"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := false
	for !got {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("alice's group consumer read nothing: %v", fs.Errors())
		}
		fs.EachRecord(func(r *kgo.Record) { got = got || string(r.Value) == "granted" })
	}

	// A DENY on the topic's prefix wins over the literal ALLOW.
	deny := kadm.NewACLs().Topics("ord").Deny("User:*").Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternPrefixed)
	if res, err := admin.CreateACLs(ctx, deny); err != nil || res[0].Err != nil {
		t.Fatalf("deny: %v %+v", err, res)
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		err := prod.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("denied")}).FirstErr()
		return errors.Is(err, kerr.TopicAuthorizationFailed)
	}, "a prefixed DENY did not win over the literal ALLOW")
	if code := topicMetadataCode(ctx, t, aliceCl, "orders"); code != 0 {
		t.Errorf("READ still implies DESCRIBE under a WRITE deny: code %d", code)
	}
}

// allow.everyone.if.no.acl.found lets anyone act on a resource no ACL
// names; once a binding names it, only the ACLs decide.
func TestAllowEveryoneIfNoACLFound(t *testing.T) {
	p := newPKI(t)
	s := startAuthorizedServer(t, p, "allow.everyone.if.no.acl.found=true")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bobCert := p.issue(t, tlstest.LeafOptions{Subject: "CN=bob,OU=eng"})
	bobCl, _ := mtlsAdmin(t, s, p, bobCert)
	if err := createTopic(ctx, bobCl, "open", 1, 1); err != nil {
		t.Fatalf("no ACL names the cluster or the topic: %v", err)
	}
	if err := bobCl.ProduceSync(ctx, &kgo.Record{Topic: "open", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce with no ACL: %v", err)
	}
	_, admin := mtlsAdmin(t, s, p, p.issue(t, tlstest.LeafOptions{Subject: "CN=admin"}))
	only := kadm.NewACLs().Topics("open").Allow("User:carol").Operations(kadm.OpRead).ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := admin.CreateACLs(ctx, only); err != nil || res[0].Err != nil {
		t.Fatalf("create: %v %+v", err, res)
	}
	testutil.Eventually(t, 20*time.Second, func() bool {
		return topicMetadataCode(ctx, t, bobCl, "open") == kerr.TopicAuthorizationFailed.Code
	}, "an ACL on the topic did not end allow.everyone.if.no.acl.found for it")
}

// topicMetadataCode asks Metadata (uncached) for one topic and returns its
// error code.
func topicMetadataCode(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) int16 {
	t.Helper()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(topic)}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 {
		t.Fatalf("metadata %s: %v %+v", topic, err, resp)
	}
	return resp.Topics[0].ErrorCode
}

// Three combined nodes over mutual TLS with the StandardAuthorizer, the
// brokers' own certificate (CN=broker) a super user as Kafka requires for
// inter-broker traffic: registration, heartbeats, forwarding and follower
// fetches pass the authorizer (CLUSTER_ACTION), admin's requests forwarded
// to the active controller are authorized on the broker, and app, refused
// until admin grants it WRITE and READ, then writes with three replicas
// (idempotently) and reads them back.
func TestACLsOnAClusterOverMutualTLS(t *testing.T) {
	p := newPKI(t)
	overrides := map[string]string{
		"listener.security.protocol.map": "PLAINTEXT:SSL,CONTROLLER:SSL",
		"min.insync.replicas":            "2",
		"ssl.principal.mapping.rules":    "RULE:^CN=([a-z]+),.*$/$1/,DEFAULT",
		"authorizer.class.name":          "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                    "User:broker;User:admin",
	}
	for _, kv := range p.brokerSSL(t, "required") {
		k, v, _ := strings.Cut(kv, "=")
		overrides[k] = v
	}
	c := testcluster.StartProcesses(t, binaryPath, testcluster.Options{Nodes: 3, Overrides: overrides})
	addrs := c.Layout.BrokerAddrs()
	adminTLS := kgo.DialTLSConfig(p.clientTLS(p.issue(t, tlstest.LeafOptions{Subject: "CN=admin,OU=ops"})))
	appTLS := kgo.DialTLSConfig(p.clientTLS(p.issue(t, tlstest.LeafOptions{Subject: "CN=app,OU=eng"})))
	adminCl := client(t, addrs[0], kgo.SeedBrokers(addrs...), adminTLS)
	admin := kadm.NewClient(adminCl)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const topic = "guarded"
	if err := createTopic(ctx, adminCl, topic, 1, 3); err != nil {
		t.Fatalf("admin creates a topic through a broker: %v", err)
	}
	testutil.EventuallyNoError(t, 30*time.Second, func() error { return fullISR(admin, topic, 3) },
		"followers (User:broker) fetch under the authorizer")

	refused := client(t, addrs[1], kgo.SeedBrokers(addrs...), appTLS, kgo.DisableIdempotentWrite(), kgo.RecordRetries(1))
	if err := refused.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Fatalf("app without ACLs: %v", err)
	}
	grant := kadm.NewACLs().Topics(topic).Groups("app-group").Allow("User:app").
		Operations(kadm.OpRead, kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral)
	if res, err := admin.CreateACLs(ctx, grant); err != nil || res[0].Err != nil {
		t.Fatalf("grant: %v %+v", err, res)
	}
	prod := client(t, addrs[2], kgo.SeedBrokers(addrs...), appTLS)
	for i := range 50 {
		testutil.EventuallyNoError(t, 30*time.Second, func() error {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return prod.ProduceSync(pctx, &kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}).FirstErr()
		}, "app produces record %d once granted", i)
	}
	// Read without a group: testcluster sets offsets.topic.replication.factor
	// to 1, below this cluster's min.insync.replicas of 2, so offset commits
	// fail with NOT_ENOUGH_REPLICAS here as they would on Kafka; groups
	// under the authorizer are tested above.
	cons := client(t, addrs[1], kgo.SeedBrokers(addrs...), appTLS, kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	seen := map[string]bool{}
	for len(seen) < 50 {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("app read %d of 50 records: %v", len(seen), fs.Errors())
		}
		fs.EachRecord(func(r *kgo.Record) { seen[string(r.Value)] = true })
	}
}
