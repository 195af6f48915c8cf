package web

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

// TestMessagePagesActAsTheLoggedInUser: behind a SASL listener with an
// authorizer, the browser's and the producer's own clients authenticate as
// the logged-in user, so the user's ACLs decide: alice may read "orders"
// but not write it, and may not read "secret".
func TestMessagePagesActAsTheLoggedInUser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sluice server process")
	}
	plain, sasl, ctrl := testbin.FreePort(t), testbin.FreePort(t), testbin.FreePort(t)
	srv := testbin.StartServer(t, testbin.Build(t), testbin.ServerConfig{DataDir: t.TempDir(), ClientPort: plain, ControllerPort: ctrl, Overrides: []string{
		fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", plain, sasl, ctrl),
		"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms=SCRAM-SHA-512",
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users=User:ANONYMOUS",
	}})
	n := &liveNode{addr: srv.Addr()}
	var err error
	if n.cl, err = kgo.NewClient(kgo.SeedBrokers(srv.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.cl.Close)
	n.adm = kadm.NewClient(n.cl)
	n.fillOrders(t)
	n.createTopic(t, "secret", 1)
	n.produce(t, &kgo.Record{Topic: "secret", Value: []byte("hidden")})
	grantAliceReadOnOrders(t, n.adm)

	c, err := New(Options{Bootstrap: fmt.Sprintf("127.0.0.1:%d", sasl), SASLMechanisms: []string{"SCRAM-SHA-512"},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	h := c.Handler()
	cookies, token := formSession(t, h, "/login")
	testutil.Eventually(t, 15*time.Second, func() bool {
		resp := do(t, h, "POST", "/login", url.Values{csrfField: {token}, "username": {"alice"}, "password": {"alice-secret"}, "next": {"/messages"}}, cookies...)
		if resp.StatusCode != http.StatusSeeOther {
			return false
		}
		cookies = resp.Cookies() // a login gives a new session id
		return true
	}, "alice's login")

	get := func(target string) (int, string) {
		resp := do(t, h, "GET", target, nil, cookies...)
		return resp.StatusCode, readBody(t, resp)
	}
	if status, body := get("/messages?topic=orders&offset=5&limit=2"); status != http.StatusOK || offsetsShown(body) != "5,6" {
		t.Fatalf("alice browsing orders: %d, offsets %q\n%s", status, offsetsShown(body), body)
	}
	if status, body := get("/messages?topic=secret"); status != http.StatusForbidden || !strings.Contains(body, "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("alice browsing secret: %d\n%s", status, body)
	}
	_, body := get("/produce?topic=orders")
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("produce page has no CSRF token:\n%s", body)
	}
	status, body := post(t, h, "/produce", url.Values{csrfField: {m[1]}, "topic": {"orders"}, "partition": {"1"}, "value": {"v"}}, cookies)
	if status != http.StatusForbidden || !strings.Contains(body, "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("alice producing to orders: %d\n%s", status, body)
	}
}

// grantAliceReadOnOrders creates the SCRAM user alice with READ and
// DESCRIBE on the topic orders, nothing else.
func grantAliceReadOnOrders(t *testing.T, adm *kadm.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "alice-secret"}}); err != nil {
		t.Fatal(err)
	}
	b := kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead, kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	res, err := adm.CreateACLs(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create ACL: %v", r.Err)
		}
	}
}
