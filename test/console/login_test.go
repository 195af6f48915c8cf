package console

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluice-io/sluice/internal/testbin"
	"github.com/sluice-io/sluice/internal/testutil"
)

const (
	alicePassword = "alice-secret-1"
	aliceTopic    = "alice-topic"
	secretTopic   = "secret-topic"
)

// TestConsoleLogin runs a server whose client listener is SASL_PLAINTEXT
// (SCRAM) under Kafka's StandardAuthorizer: the console asks for a login,
// refuses a wrong password, and once alice is logged in shows and does
// only what her ACLs allow; logging out ends the session.
func TestConsoleLogin(t *testing.T) {
	s := startLoginServer(t)
	b := newBrowser(t)

	if status := b.open(s.url + "/topics"); status != 200 || !b.has("#login-form") {
		t.Fatalf("a page without a login answered %d without the login form: %q", status, firstLine(b.text("#main")))
	}
	b.screenshot("login-form")
	b.checkClean("login form")

	b.typeIn("wrong password", map[string]string{"#login-username": "alice", "#login-password": "wrong-password"})
	status := b.click("#login-submit")
	b.screenshot("login-refused")
	if status != 401 || !b.has("#login-error") {
		t.Errorf("a wrong password answered %d: %q", status, firstLine(b.text("#main")))
	}
	b.checkNoStack("wrong password")
	b.checkClean("wrong password")

	b.typeIn("login", map[string]string{"#login-username": "alice", "#login-password": alicePassword})
	if status := b.click("#login-submit"); status != 200 {
		t.Fatalf("alice's login answered %d: %q", status, firstLine(b.text("#main")))
	}
	b.screenshot("login-topics")
	b.checkClean("after the login")
	if got := b.text("#user"); got != "alice" {
		t.Errorf("the header names %q, want alice", got)
	}
	if !b.has("#topics-table") {
		t.Fatalf("the login did not lead back to the topics page: %q", firstLine(b.text("#main")))
	}
	topics := strings.Join(b.texts("#topics-table tr.topic a.topic-link"), " ")
	if !strings.Contains(topics, aliceTopic) || strings.Contains(topics, secretTopic) {
		t.Errorf("alice's topics list %q: want %s and not %s", topics, aliceTopic, secretTopic)
	}
	for _, path := range []string{"/", "/brokers", "/groups", "/topics/" + aliceTopic, "/messages?topic=" + aliceTopic} {
		if status := b.open(s.url + path); status != 200 {
			t.Errorf("alice: GET %s answered %d: %q", path, status, firstLine(b.text("#main")))
		}
		b.checkClean("alice " + path)
		b.checkNoStack("alice " + path)
	}

	testAliceRefused(t, b, s)

	b.open(s.url + "/")
	if status := b.click("#logout-form button"); status != 200 || !b.has("#login-form") {
		t.Errorf("after the logout: %d, %q, want the login form", status, firstLine(b.text("#main")))
	}
	if status := b.open(s.url + "/topics"); status != 200 || !b.has("#login-form") {
		t.Errorf("after the logout the topics page answered %d without asking for a login", status)
	}
}

// testAliceRefused: alice writing where her ACLs do not let her is
// refused with Kafka's authorization error on the page, never a 500.
func testAliceRefused(t *testing.T, b *browser, s *loginServer) {
	t.Helper()
	b.open(s.url + "/produce?topic=" + secretTopic)
	b.typeIn("produce to the secret topic", map[string]string{"#produce-partition-input": "0", "#produce-value": "from alice"})
	status := b.click("#produce-submit")
	b.screenshot("login-produce-refused")
	if status != 403 {
		t.Errorf("alice producing to %s answered %d, want 403", secretTopic, status)
	}
	if text := b.text("#main"); !strings.Contains(text, "AUTHORIZATION_FAILED") {
		t.Errorf("the refusal does not give Kafka's authorization error: %q", text)
	}
	b.checkNoStack("produce refused")
	b.checkClean("produce refused")
	ends := endOffsets(t, s.admin, secretTopic)
	if o, _ := ends.Lookup(secretTopic, 0); o.Offset != 0 {
		t.Errorf("alice's refused produce wrote: %s-0 end offset %d", secretTopic, o.Offset)
	}
}

// loginServer is a console server whose client listener asks for SASL.
type loginServer struct {
	url   string
	admin *kadm.Client // as ANONYMOUS on the PLAINTEXT listener, a super user
}

// startLoginServer runs sluice with a PLAINTEXT listener (the start probe
// and the admin), a SASL_PLAINTEXT one (SCRAM, which the console uses),
// the StandardAuthorizer, the user alice and the ACLs that let her
// describe, read and write aliceTopic only.
func startLoginServer(t *testing.T) *loginServer {
	t.Helper()
	ports, err := testbin.FreePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	scramJAAS := `org.apache.kafka.common.security.scram.ScramLoginModule required;`
	cs := &consoleServer{}
	cs.url = "http://127.0.0.1:" + strconv.Itoa(ports[3])
	cs.Server = testbin.StartServer(t, testbin.Build(t), testbin.ServerConfig{
		DataDir: t.TempDir(), ClientPort: ports[0], ControllerPort: ports[2],
		Overrides: []string{
			fmt.Sprintf("listeners=PLAINTEXT://127.0.0.1:%d,SASL_PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", ports[0], ports[1], ports[2]),
			"listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
			"sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
			"listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=" + scramJAAS,
			"listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=" + scramJAAS,
			"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users=User:ANONYMOUS",
			"sluice.console.listener=127.0.0.1:" + strconv.Itoa(ports[3]),
		},
	})
	waitConsole(t, cs.url) // GET / is the login form, after a redirect
	adm := cs.admin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	createTopic(ctx, t, adm, aliceTopic, 1)
	createTopic(ctx, t, adm, secretTopic, 1)
	addScramUser(ctx, t, adm, "alice", alicePassword)
	grant := kadm.NewACLs().Topics(aliceTopic).Allow("User:alice").
		Operations(kadm.OpDescribe, kadm.OpRead, kadm.OpWrite).ResourcePatternType(kadm.ACLPatternLiteral)
	res, err := adm.CreateACLs(ctx, grant)
	if err == nil && len(res) > 0 {
		err = res[0].Err
	}
	if err != nil {
		t.Fatalf("ACLs for alice: %v", err)
	}
	return &loginServer{url: cs.url, admin: adm}
}

// addScramUser gives user a SCRAM-SHA-256 and -512 credential and waits
// until both are described (the listener checks the published image).
func addScramUser(ctx context.Context, t *testing.T, adm *kadm.Client, user, password string) {
	t.Helper()
	// Kafka refuses one user twice in a request: one mechanism a request.
	for _, m := range []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512} {
		res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: m, Iterations: 4096, Password: password}})
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatalf("SCRAM user %s: %v", user, err)
		}
	}
	testutil.EventuallyNoError(t, 15*time.Second, func() error {
		d, err := adm.DescribeUserSCRAMs(ctx, user)
		if err != nil {
			return err
		}
		if n := len(d[user].CredInfos); n != 2 {
			return fmt.Errorf("%d credentials described", n)
		}
		return nil
	}, "user %s's credentials published", user)
}
