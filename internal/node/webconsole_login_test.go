package node

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/internal/testutil"
)

// saslProps are a PLAINTEXT listener (the tests' admin) and a
// SASL_PLAINTEXT one with SCRAM-SHA-512, plus extra.
func saslProps(extra map[string]string) map[string]string {
	p := map[string]string{
		"listeners":                      "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:{ctrl}",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms":        "SCRAM-SHA-512",
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"connection.failed.authentication.delay.ms":                   "10",
	}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

func addSCRAMUser(t *testing.T, adm *kadm.Client, user, password string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: kadm.ScramSha512, Iterations: 4096, Password: password}})
	if err == nil {
		err = res.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// login logs b in as user, retrying while the broker has not yet applied
// a credential created a moment ago; it returns the page it lands on.
func login(t *testing.T, b *browser, user, password string) string {
	t.Helper()
	_, body := b.get("/login")
	token := csrf(t, body)
	testutil.Eventually(t, 10*time.Second, func() bool {
		code, _, _ := b.post("/login", url.Values{"csrf_token": {token}, "username": {user}, "password": {password}, "next": {"/"}})
		return code == http.StatusSeeOther
	}, "%s's login", user)
	_, body = b.get("/topics")
	return body
}

// With a SASL listener the console requires a login, checked by
// authenticating to the node with SCRAM as the user; a wrong password is
// refused; logging out ends the session.
func TestWebConsoleLoginWithSCRAM(t *testing.T) {
	plain, base := consoleNode(t, saslProps(nil))
	adm, _ := newAdmin(t, plain)
	addSCRAMUser(t, adm, "alice", "alice-secret")

	b := newBrowser(t, base)
	code, _ := b.get("/topics")
	if code != http.StatusSeeOther {
		t.Fatalf("topics before login: %d, want a redirect to the login", code)
	}
	code, body := b.get("/login?next=/topics")
	if code != http.StatusOK {
		t.Fatalf("login page: %d\n%s", code, body)
	}
	token := csrf(t, body)
	code, body, _ = b.post("/login", url.Values{"csrf_token": {token}, "username": {"alice"}, "password": {"wrong"}, "next": {"/topics"}})
	if code != http.StatusUnauthorized || !strings.Contains(body, "Login failed") {
		t.Fatalf("wrong password: %d\n%s", code, body)
	}
	// The user may have been created a moment ago: the broker applies the
	// credential once its metadata has it.
	var loc string
	testutil.Eventually(t, 10*time.Second, func() bool {
		code, body, loc = b.post("/login", url.Values{"csrf_token": {token}, "username": {"alice"}, "password": {"alice-secret"}, "next": {"/topics"}})
		return code == http.StatusSeeOther
	}, "alice's login")
	if code != http.StatusSeeOther || loc != "/topics" {
		t.Fatalf("login: %d %q\n%s", code, loc, body)
	}
	code, body = b.get("/topics")
	if code != http.StatusOK || !strings.Contains(body, `<span id="user">alice</span>`) {
		t.Fatalf("topics after login: %d\n%s", code, body)
	}
	code, _, loc = b.post("/logout", url.Values{"csrf_token": {csrf(t, body)}})
	if code != http.StatusSeeOther || loc != "/login" {
		t.Fatalf("logout: %d %q", code, loc)
	}
	if code, _ = b.get("/topics"); code != http.StatusSeeOther {
		t.Fatalf("topics after logout: %d, want a redirect to the login", code)
	}
}

// The console acts as the logged-in user: the cluster's ACLs decide what
// a page shows and what a form may do, and a refusal is Kafka's, shown as
// a page, never a 500.
func TestWebConsoleActsUnderTheUsersACLs(t *testing.T) {
	plain, base := consoleNode(t, saslProps(map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:ANONYMOUS", // the tests' PLAINTEXT admin
	}))
	adm, _ := newAdmin(t, plain)
	addSCRAMUser(t, adm, "bob", "bob-secret")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, topic := range []string{"secret", "shared"} {
		if _, err := adm.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	acl := kadm.NewACLs().Allow("User:bob").Topics("shared").Operations(kadm.OpDescribe).ResourcePatternType(kadm.ACLPatternLiteral)
	if _, err := adm.CreateACLs(ctx, acl); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, base)
	var body string
	testutil.Eventually(t, 10*time.Second, func() bool {
		body = login(t, b, "bob", "bob-secret")
		return strings.Contains(body, `data-topic="shared"`)
	}, "bob sees the topic he may describe")
	if strings.Contains(body, `data-topic="secret"`) {
		t.Fatalf("bob sees a topic he may not describe:\n%s", body)
	}
	code, body, _ := b.post("/topics", url.Values{"csrf_token": {csrf(t, body)}, "name": {"bobs"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("bob creating a topic: %d\n%s", code, body)
	}
	// Pages whose requests need cluster rights still render, saying what
	// was refused.
	if code, body = b.get("/"); code != http.StatusOK || !strings.Contains(body, `id="quorum-error"`) {
		t.Fatalf("overview for bob: %d\n%s", code, body)
	}
}
