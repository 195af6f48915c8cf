package node

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"sluice/internal/testutil"
)

// With a SASL listener the console requires a login, checked by
// authenticating to the node with SCRAM as the user; a wrong password is
// refused; logging out ends the session.
func TestWebConsoleLoginWithSCRAM(t *testing.T) {
	plain, base := consoleNode(t, map[string]string{
		"listeners":                      "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:{ctrl}",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
		"sasl.enabled.mechanisms":        "SCRAM-SHA-512",
		"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"connection.failed.authentication.delay.ms":                   "10",
	})
	adm, _ := newAdmin(t, plain)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "alice-secret"}}); err != nil {
		t.Fatal(err)
	}

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
